import { commentsOpenAt, showable } from "../../src/core/search/keyword/showable";

describe("showable snippets", () => {
  it("drops %% comments %%, HTML comments and lines of images or badges", () => {
    expect(showable("Intro %%hidden note%% text.\n\n%%\nblock\n%%\nAfter.")).toBe("Intro  text.\n\nAfter.");
    expect(showable("a <!-- hidden --> b")).toBe("a  b");
    expect(showable("[![CI](https://x/badge.svg)](https://x) ![b](y.png)\n![[diagram.png]]\nProse about the plugin.")).toBe("Prose about the plugin.");
    // An image inside prose stays.
    expect(showable("See ![a](b.png) here.")).toBe("See ![a](b.png) here.");
  });

  it("a comment cut by the window loses its cut-off side", () => {
    const note = "intro %% hub section ----- %%\n\n# Templated daily notes\n\nPlugin ID: x\nDaily notes are useful. %% Hub MOCs: don't edit below\nmore %% end";
    const at = note.indexOf("section");
    expect(commentsOpenAt(note, at)).toEqual({ percent: true, html: false });
    expect(showable("… section ----- %%\n\n# Templated daily notes\n\nPlugin ID: x …", commentsOpenAt(note, at))).toBe("# Templated daily notes\n\nPlugin ID: x …");
    const at2 = note.indexOf("Daily notes are");
    expect(commentsOpenAt(note, at2)).toEqual({ percent: false, html: false });
    expect(showable("… Daily notes are useful. %% Hub MOCs: don't edit below …", commentsOpenAt(note, at2))).toBe("… Daily notes are useful.");
    const html = "x <!-- a long comment --> Real text <!-- another";
    expect(showable("… long comment --> Real text …", commentsOpenAt(html, html.indexOf("long")))).toBe("Real text …");
    expect(showable("Real text <!-- another", commentsOpenAt(html, html.indexOf("Real")))).toBe("Real text");
  });

  it("keeps the snippet as it was when nothing else is left", () => {
    expect(showable("%% only a comment %%")).toBe("%% only a comment %%");
    expect(showable("![[only.png]]")).toBe("![[only.png]]");
  });
});
