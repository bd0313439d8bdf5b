import { foldWord, stemEnglish, tokenize } from "../../src/core/search";
import { accentKey, forEachToken, TermDict } from "../../src/core/search/tokenize";
import { dictBytes, DictWriter } from "../../src/core/search/keyword/persist";

describe("tokenize", () => {
  test("folds case and width, keeps accents; a word's accent key spells it without them", () => {
    expect(tokenize("Café NAÏVE Résumé Straße Ångström", { language: "none" })).toEqual(["café", "naïve", "résumé", "straße", "ångström"]);
    expect(["café", "naïve", "résumé", "straße", "ångström", "đường", "quả"].map(accentKey)).toEqual(["cafe", "naive", "resume", "strasse", "angstrom", "duong", "qua"]);
    expect(foldWord("ＯＢＳＩＤＩＡＮ")).toBe("obsidian");
    // Decomposed accents are composed (NFKC): the same term as the composed spelling.
    expect(tokenize("e\u0301te\u0301", { language: "none" })).toEqual(["été"]);
  });

  test("a term's accent key skips the normalizing only where it could change nothing: every BMP character, alone and after a letter", () => {
    const marks = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Arabic}\p{Script=Hebrew}])\p{M}+/gu;
    const special = new Map([["ß", "ss"], ["æ", "ae"], ["œ", "oe"], ["ø", "o"], ["đ", "d"], ["ð", "d"], ["þ", "th"], ["ł", "l"], ["ı", "i"]]);
    const slow = (t: string) => t.normalize("NFD").replace(marks, "$1").normalize("NFC").replace(/[ßæœøđðþłı]/g, (c) => special.get(c) ?? c);
    let cjk = 0;
    for (let c = 0x80; c <= 0xffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCharCode(c);
      // Terms are folded words (NFKC, lower case): as a term alone, after a letter, and with a mark after it.
      for (const t of [ch, "a" + ch, "漢" + ch, ch + "\u0301", "か" + ch]) {
        const term = foldWord(t);
        if (accentKey(term) !== slow(term)) throw new Error(`accentKey(${JSON.stringify(term)}) = ${JSON.stringify(accentKey(term))}, not ${JSON.stringify(slow(term))}`);
      }
      if (/[\p{Script=Han}\p{Script=Hangul}]/u.test(ch)) cjk++;
    }
    expect(cjk).toBeGreaterThan(20_000);
    expect(["漢字", "が", "한국어", "abc漢字", "ｶﾞ"].map((t) => accentKey(foldWord(t)))).toEqual(["漢字", "が", "한국어", "abc漢字", "ガ"]);
  });

  test("a query word's forms: itself first; typed without accents, its accented spellings; typed with them, the spelling without", () => {
    const dict = new TermDict();
    for (const t of ["café", "cafe", "cafè", "cafes", "quá", "quả", "qua", "quan", "constructor"]) dict.id(t);
    const forms = (t: string, language: "en" | "none" = "en") => dict.forms(t, language).map((g) => dict.name(g));
    expect(forms("cafe")).toEqual(["cafe", "café", "cafè", "cafes"]);
    expect(forms("qua", "none")).toEqual(["qua", "quá", "quả"]);
    // Accents typed are meant: not the other accented spellings ("quá" is not "quả").
    expect(forms("café", "none")).toEqual(["café", "cafe"]);
    expect(forms("quá", "none")).toEqual(["quá", "qua"]);
    // A word the dictionary lacks still reaches its spelling without accents.
    expect(forms("cafë", "none")).toEqual(["cafe"]);
    dict.id("càfe");
    expect(forms("cafe", "none")).toEqual(["cafe", "café", "cafè", "càfe"]);
    expect(forms("constructor", "none")).toEqual(["constructor"]);
  });

  test("indexes words as written in every language; the dictionary gives a query word its other forms (Porter2 stems)", () => {
    expect(tokenize("running runs ran connections connected generously")).toEqual(["running", "runs", "ran", "connections", "connected", "generously"]);
    expect(tokenize("running connections", { language: "none" })).toEqual(["running", "connections"]);
    const dict = new TermDict();
    for (const t of ["run", "running", "runs", "ran", "connect", "connections", "connected", "happy", "happiness", "happily", "hoping", "hope"]) dict.id(t);
    const forms = (t: string, language: "en" | "none" = "en") => dict.forms(t, language).map((g) => dict.name(g));
    // The word as typed first, then its other forms; "ran" is not a form of "run" for a stemmer.
    expect(forms("running")).toEqual(["running", "run", "runs"]);
    expect(forms("connected").sort()).toEqual(["connect", "connected", "connections"]);
    expect(forms("happiness").sort()).toEqual(["happiness", "happy"]);
    expect(forms("hope").sort()).toEqual(["hope", "hoping"]);
    // A word the dictionary lacks still reaches its forms; language none: the word alone.
    expect(forms("connecting").sort()).toEqual(["connect", "connected", "connections"]);
    expect(forms("running", "none")).toEqual(["running"]);
    // A term added later is found on the next call.
    dict.id("runner");
    dict.id("runnings");
    expect(forms("running")).toContain("runnings");
    const cases: Record<string, string> = {
      caresses: "caress", ponies: "poni", ties: "tie", cats: "cat", agreed: "agre", hopping: "hop", hoping: "hope",
      relational: "relat", happiness: "happi", skies: "sky", dying: "die", knightly: "knight", generalization: "general",
      consistency: "consist", notes: "note", searching: "search", linked: "link", tags: "tag",
    };
    for (const [w, s] of Object.entries(cases)) expect([w, stemEnglish(w)]).toEqual([w, s]);
  });

  test("the dictionary's bitset of terms caught up in steps finds the same forms as made in one go", () => {
    // The forms of "sync" on either side of the steps' edges (terms 4,095 and 4,096, 8,191 and 8,192).
    const at = new Map([[4095, "syncs"], [4096, "synced"], [8191, "syncing"], [8192, "sync"]]);
    const fill = (d: TermDict) => {
      for (let i = 0; i < 20000; i++) d.id(at.get(i) ?? `w${i}x`);
      for (const t of ["constructor", "__proto__", "toString"]) d.id(t);
    };
    const stepped = new TermDict();
    fill(stepped);
    let steps = 0;
    // Stopped at every chance: 4,096 terms a step, the bitset's then the accent keys'.
    while (!stepped.catchUpTermBits(() => true)) steps++;
    expect(steps).toBe(8);
    expect(stepped.catchUpTermBits(() => true)).toBe(true);
    const whole = new TermDict();
    fill(whole);
    for (const w of ["sync", "syncing", "constructor"]) expect(stepped.forms(w, "en")).toEqual(whole.forms(w, "en"));
    expect(stepped.forms("syncing", "en").map((g) => stepped.name(g)).sort()).toEqual(["sync", "synced", "syncing", "syncs"]);
  });

  test("a new bitset's pages are written in steps of their own before any term goes in (first touched by the terms' bits, they were page faults)", () => {
    const n = 300_000;
    const d = new TermDict();
    for (let i = 0; i < n - 2; i++) d.id(`p${i.toString(36)}`);
    d.id("sync");
    d.id("syncing");
    let steps = 0;
    while (!d.catchUpTermBits(() => true)) {
      steps++;
      // Meanwhile a word's forms are looked up one by one.
      if (steps === 2) expect(d.forms("sync", "en").map((g) => d.name(g))).toEqual(["sync", "syncing"]);
    }
    // 300k terms, 16+ bits a term: 2^23 bits, 262,144 words written 65,536 a step (the last
    // piece followed by the terms at once); then 4,096 terms a step, the bitset's then the accent keys'.
    expect(steps).toBe(3 + 2 * Math.floor((n - 1) / 4096));
    expect(d.forms("sync", "en").map((g) => d.name(g))).toEqual(["sync", "syncing"]);
  });

  test("splits on punctuation: hyphens, colons, C++, apostrophes", () => {
    expect(tokenize("e-mail well-known a:b C++", { language: "none" })).toEqual(["e", "mail", "well", "known", "a", "b", "c"]);
    expect(tokenize("don't", { language: "none" })).toEqual(["dont"]);
    expect(tokenize("#tag/nested [[Link]]", { language: "none" })).toEqual(["tag", "nested", "link"]);
  });

  test("segments Japanese, Chinese and Korean into bigrams", () => {
    expect(tokenize("東京都に住む")).toEqual(["東京", "京都", "都に", "に住", "住む"]);
    expect(tokenize("我喜欢学习中文")).toEqual(["我喜", "喜欢", "欢学", "学习", "习中", "中文"]);
    expect(tokenize("한국어 공부")).toEqual(["한국", "국어", "공부"]);
    expect(tokenize("猫")).toEqual(["猫"]);
    // Mixed scripts in one word, half-width katakana folded to full width.
    expect(tokenize("Obsidianのノート ﾃｽﾄ")).toEqual(["obsidian", "のノ", "ノー", "ート", "テス", "スト"]);
  });

  test("a query's CJK terms are a subsequence of a document's", () => {
    const doc = tokenize("ノートを検索する方法について");
    const q = tokenize("検索");
    expect(doc).toEqual(expect.arrayContaining(q));
  });

  test("handles very long lines and junk without trouble", () => {
    const long = "word ".repeat(50_000) + "日本語".repeat(10_000);
    const toks = tokenize(long);
    expect(toks.length).toBe(50_000 + 30_000 - 1);
    expect(tokenize("x".repeat(500))[0].length).toBeLessThanOrEqual(48);
    expect(tokenize("")).toEqual([]);
    expect(tokenize("!!! --- *** ### ")).toEqual([]);
  });

  test("stops after maxTokens tokens, at the end of the word that gave the last (a CJK run may give a few more), with the same tokens as far as it went", () => {
    const text = "alpha beta, café naïve 日本語の窯 don't e-mail 42 x_y gamma";
    const all: [string, number, number][] = [];
    forEachToken(text, "en", (t, s, e) => all.push([t, s, e]));
    expect(all.length).toBeGreaterThan(12);
    for (let max = 1; max <= all.length + 1; max++) {
      const got: [string, number, number][] = [];
      forEachToken(text, "en", (t, s, e) => got.push([t, s, e]), undefined, max);
      expect(got).toEqual(all.slice(0, got.length));
      expect(got.length).toBeGreaterThanOrEqual(Math.min(max, all.length));
      // Only a run of CJK bigrams (one word) goes past the limit.
      if (got.length > max) expect(got.slice(max - 1).every(([t]) => /[\u3040-\u9fff]/.test(t))).toBe(true);
    }
  });
});

describe("TermDict's own storage (code units and a table, no Map)", () => {
  test("ids, lookups, names and saved lines survive growth; odd strings and prototype words included", () => {
    const dict = new TermDict();
    const odd = ["constructor", "__proto__", "toString", "hasOwnProperty", "", "a", "日本語", "😀x", "\ud800lone", "tail\udfff", "x".repeat(10_000), "é", "Aa", "BB"];
    const words = [...odd];
    for (let i = 0; i < 50_000; i++) words.push(`w${i.toString(36)}`);
    // (Checked without an expect per term: 250k of them took ~40 s.)
    const wrong: string[] = [];
    words.forEach((w, i) => dict.id(w) !== i && wrong.push(`id ${JSON.stringify(w.slice(0, 20))}`));
    words.forEach((w, i) => dict.id(w) !== i && wrong.push(`id again ${JSON.stringify(w.slice(0, 20))}`));
    expect(dict.size).toBe(words.length);
    words.forEach((w, i) => {
      if (dict.get(w) !== i) wrong.push(`get ${JSON.stringify(w.slice(0, 20))}`);
      if (dict.name(i) !== w) wrong.push(`name ${i}`);
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(dict.get("missing")).toBeUndefined();
    expect(dict.get("w")).toBeUndefined();
    expect(dict.startsWith(dict.get("constructor")!, "constr")).toBe(true);
    expect(dict.startsWith(dict.get("a")!, "ab")).toBe(false);
    expect(new TextDecoder().decode(dictBytes(dict))).toBe(new TextDecoder().decode(new TextEncoder().encode(words.join("\n"))));
    // Made in steps (a deadline always passed: one step a few thousand terms), the same bytes.
    const job = new DictWriter(dict);
    let steps = 1;
    while (!job.step(() => true)) steps++;
    expect(steps).toBeGreaterThan(10);
    expect(Buffer.from(job.bytes()).equals(dictBytes(dict))).toBe(true);
  });

  test("a large table grows in steps: every term found meanwhile, no id given twice, a term pushed again keeps its last id", () => {
    const dict = new TermDict();
    const growing = () => (dict as unknown as { old: Int32Array | null }).old !== null;
    const words: string[] = ["constructor", "__proto__", "toString"];
    for (let i = 0; i < 420_000; i++) words.push(`g${i.toString(36)}`);
    // (Checked without an expect per term: 400k of them took most of a minute.)
    const wrong: string[] = [];
    let sawGrowth = 0;
    words.forEach((w, i) => {
      if (dict.id(w) !== i) wrong.push(`id ${w}`);
      if (growing() && sawGrowth++ % 5000 === 0) {
        // Mid-move: terms not yet moved, moved ones and new ones are all found, and not added again.
        for (let j = 0; j <= i; j += 97) if (dict.get(words[j]) !== j) wrong.push(`get ${words[j]} at ${i}`);
        if (dict.id(words[0]) !== 0 || dict.id(words[i >> 1]) !== i >> 1) wrong.push(`id again at ${i}`);
        if (dict.get("missing") !== undefined || dict.size !== i + 1) wrong.push(`size or missing at ${i}`);
      }
    });
    words.forEach((w, i) => {
      if (dict.get(w) !== i || dict.name(i) !== w) wrong.push(`after: ${w}`);
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(sawGrowth).toBeGreaterThan(10_000);

    // A restored dictionary pushing a term again while its table grows in steps: the last id wins.
    const pushed = new TermDict();
    let i = 0;
    while (!(pushed as unknown as { old: Int32Array | null }).old) pushed.push(`p${i++}`);
    pushed.push("p0");
    pushed.push("p1");
    for (let j = 0; j < 50_000; j++) pushed.push(`q${j}`);
    expect((pushed as unknown as { old: Int32Array | null }).old).toBeNull();
    expect(pushed.get("p0")).toBe(i);
    expect(pushed.get("p1")).toBe(i + 1);
    expect(pushed.get("p2")).toBe(2);
    expect(pushed.id("p0")).toBe(i);
  });

  test("its code units move to a larger array in steps, not at once: every term found and named meanwhile, its prefixes and forms too", () => {
    const dict = new TermDict();
    const words: string[] = ["constructor", "__proto__", "toString", "café", "cafe"];
    for (let i = 0; i < 400_000; i++) words.push(`u${i.toString(36)}${i % 7 ? "" : "é"}`);
    // The largest copy of code units any one term added made (typed arrays' set, over every array).
    const set = Object.getOwnPropertyDescriptor(Uint16Array.prototype, "set")?.value as ((this: Uint16Array, src: ArrayLike<number>, offset?: number) => void) | undefined;
    expect(set).toBeUndefined(); // typed arrays' set is %TypedArray%.prototype's
    const shared = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint16Array.prototype) as object, "set")!.value as (this: Uint16Array, src: ArrayLike<number>, offset?: number) => void;
    let largest = 0;
    let copies = 0;
    const spy = function (this: Uint16Array, src: ArrayLike<number>, offset?: number) {
      if (src.length > largest) largest = src.length;
      copies++;
      return shared.call(this, src, offset);
    };
    const wrong: string[] = [];
    let moving = 0;
    // Where each term's code units start: the term the copying has reached is found by them.
    const starts = [0];
    for (const w of words) starts.push(starts[starts.length - 1] + w.length);
    const state = dict as unknown as { nextChars: Uint16Array | null; charsCopied: number };
    let cut = 0;
    Object.defineProperty(Uint16Array.prototype, "set", { value: spy, configurable: true, writable: true });
    try {
      words.forEach((w, i) => {
        if (dict.id(w) !== i) wrong.push(`id ${w}`);
        if (!state.nextChars) return;
        // The term the copying stopped inside (its first units copied, the rest not yet) reads whole.
        while (starts[cut + 1] <= state.charsCopied) cut++;
        if (dict.name(cut) !== words[cut] || dict.get(words[cut]) !== cut) wrong.push(`cut ${words[cut]} at ${i}`);
        if (moving++ % 16 === 0) {
          for (let j = 0; j <= i; j += 211) if (dict.get(words[j]) !== j || dict.name(j) !== words[j]) wrong.push(`mid-move ${words[j]} at ${i}`);
          if (!dict.startsWith(i, words[i].slice(0, 3)) || dict.name(i) !== words[i]) wrong.push(`newest at ${i}`);
        }
      });
    } finally {
      delete (Uint16Array.prototype as { set?: unknown }).set;
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(moving).toBeGreaterThan(200); // 1M units, 4,096 a term
    expect(copies).toBeGreaterThan(100);
    expect(largest).toBeLessThanOrEqual(1 << 19); // under 1M units they double at once; at 1M, all were copied in one term's step
    words.forEach((w, i) => {
      if (dict.get(w) !== i || dict.name(i) !== w) wrong.push(`after ${w}`);
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    while (!dict.catchUpTermBits(() => false)); // (the warm-up's catch-up of accents and stems)
    expect(dict.forms("cafe", "none").map((g) => dict.name(g))).toEqual(["cafe", "café"]);
    expect(new TextDecoder().decode(dictBytes(dict))).toBe(words.join("\n"));
  });

  test("the warm-up's catch-up ends a growth under way in steps, and searches' forms never move terms", () => {
    const dict = new TermDict();
    const old = () => (dict as unknown as { old: Int32Array | null }).old;
    let n = 0;
    while (!old()) dict.id(`c${n++}`);
    // A search meanwhile finds every term, and leaves the old table where it was.
    expect(dict.forms(`c${n >> 1}`, "en")[0]).toBe(n >> 1);
    expect(old()).not.toBeNull();
    let steps = 1;
    while (!dict.catchUpTermBits(() => true)) steps++;
    expect(steps).toBeGreaterThan(10);
    expect(old()).toBeNull();
    for (let j = 0; j < n; j += 13) expect(dict.get(`c${j}`)).toBe(j);
  });

  test("a search catches the forms' bitset and accent map up by a bounded step; its word forms stay right meanwhile", () => {
    const dict = new TermDict();
    dict.id("sync");
    dict.catchUpForSearch();
    expect(dict.forms("sync", "en")).toEqual([0]); // bitset and accents made, every term in
    for (let i = 0; i < 300_000; i++) dict.id(`f${i.toString(36)}é`); // 300k accented terms since
    const cafe = dict.id("café");
    const syncing = dict.id("syncing");
    // One search: one step of the catch-up, not all 300k terms; the stems are looked up one by one meanwhile.
    dict.catchUpForSearch();
    expect(dict.forms("sync", "en")).toEqual([0, syncing]);
    expect(dict.forms("cafe", "none")).toEqual([]);
    // Not remembered while incomplete: once caught up, the same dictionary gives the accented term.
    expect(dict.catchUpTermBits(() => false)).toBe(true);
    expect(dict.forms("cafe", "none")).toEqual([cafe]);
    expect(dict.forms("sync", "en")).toEqual([0, syncing]);
    // A few searches catch a few new terms up in full.
    const resume = dict.id("résumé");
    dict.catchUpForSearch();
    expect(dict.forms("resume", "none")).toEqual([resume]);
  });

  test("a saved dictionary restored in bulk holds what pushing its terms one by one would", () => {
    const run = (dict: TermDict, bytes: Uint8Array): boolean => {
      const it = dict.restoreLines(bytes);
      for (;;) {
        const r = it.next();
        if (r.done) return r.value;
      }
    };
    const pushed = (text: string): TermDict => {
      const dict = new TermDict();
      for (const t of text.split("\n")) dict.push(t);
      return dict;
    };
    const same = (a: TermDict, b: TermDict, terms: string[]) => {
      expect(a.size).toBe(b.size);
      const wrong: string[] = [];
      for (let k = 0; k < b.size; k++) if (a.name(k) !== b.name(k)) wrong.push(`name ${k}`);
      for (const t of terms) if (a.get(t) !== b.get(t)) wrong.push(`get ${t}`);
      expect(wrong).toEqual([]);
    };
    // Every kind of character, an empty term, a repeated one (its last id wins), keys of Object.prototype;
    // 60k more terms so that the table's slots are sorted by their top bits, not one a bucket.
    const words = ["constructor", "__proto__", "toString", "café", "Ärger", "東京都", "한국어", "😀x", "x😀", "", "日本", "café", "hasOwnProperty", "z"];
    for (let i = 0; i < 60_000; i++) words.push(i % 3 === 0 ? `n${i}` : i % 3 === 1 ? `語${i}` : `${(i * 2654435761) >>> 0}`);
    words.push("constructor", "toString");
    const text = words.join("\n");
    const enc = new TextEncoder();
    const bulk = new TermDict();
    expect(run(bulk, enc.encode(text))).toBe(true);
    same(bulk, pushed(text), words);
    expect(bulk.get("constructor")).toBe(words.length - 2);
    expect(bulk.get("café")).toBe(11);
    expect(bulk.get("nope")).toBeUndefined();
    // New terms after it get the next ids; a known one keeps its id.
    expect(bulk.id("brand-new")).toBe(words.length);
    expect(bulk.id("東京都")).toBe(5);
    // A trailing newline is an empty last term; a byte-order mark at the start is dropped (as TextDecoder does).
    const tail = new TermDict();
    expect(run(tail, enc.encode("a\nb\n"))).toBe(true);
    same(tail, pushed("a\nb\n"), ["a", "b", ""]);
    const bom = new TermDict();
    expect(run(bom, new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0x0a, 0x62]))).toBe(true);
    same(bom, pushed("a\nb"), ["a", "b"]);
    expect(run(new TermDict(), new Uint8Array(0))).toBe(true);
    // Bytes that are not UTF-8 as TextEncoder writes it are declined, the dictionary left empty.
    for (const bad of [[0x61, 0x80], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe6, 0x97], [0x61, 0xf0, 0x9f, 0x98], [0xff]]) {
      const d = new TermDict();
      expect(run(d, new Uint8Array([0x78, 0x0a, ...bad]))).toBe(false);
      expect(d.size).toBe(0);
      expect(d.get("x")).toBeUndefined();
    }
    expect(() => run(bulk, enc.encode("a"))).toThrow(/not empty/);
  });

  test("a term pushed again (a restored dictionary) keeps its last id, through growth too", () => {
    const dict = new TermDict();
    dict.push("x");
    dict.push("y");
    dict.push("x");
    expect(dict.get("x")).toBe(2);
    for (let i = 0; i < 5000; i++) dict.push(`t${i}`);
    expect(dict.get("x")).toBe(2);
    expect(dict.get("y")).toBe(1);
    expect(dict.name(0)).toBe("x");
    expect(dict.id("x")).toBe(2);
  });
});
