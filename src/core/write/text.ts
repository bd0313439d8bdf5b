/** Line endings and byte-order marks of existing notes, kept as they were when we change a note. */
export interface TextShape {
  bom: boolean;
  /** "\r\n" only when every line break in the file is CRLF. */
  eol: "\n" | "\r\n";
}

export function shapeOf(text: string): TextShape {
  const bom = text.charCodeAt(0) === 0xfeff;
  // CRLF when every line break is one (counted in place: a match array per break cost ~20 ms a MB).
  let lf = 0;
  let crlf = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) {
    lf++;
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
  }
  return { bom, eol: crlf > 0 && crlf === lf ? "\r\n" : "\n" };
}

/** The text without BOM and with LF line breaks when the file is all-CRLF (mixed files stay as they are). */
export function toWorkingText(text: string, shape: TextShape): string {
  const noBom = shape.bom ? text.slice(1) : text;
  return shape.eol === "\r\n" ? noBom.replace(/\r\n/g, "\n") : noBom;
}

/** Back to the file's own shape. Client text with CRLF is folded to LF first, so nothing doubles. */
export function fromWorkingText(text: string, shape: TextShape): string {
  const body = shape.eol === "\r\n" ? text.replace(/\r\n/g, "\n").replace(/\n/g, "\r\n") : text;
  return (shape.bom ? "\uFEFF" : "") + body;
}
