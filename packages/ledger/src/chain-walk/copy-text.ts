/** A row's fields as COPY's text format writes them: null for `\N`, else the text with its escapes undone. */
export type Fields = (string | null)[];

const ESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/**
 * COPY TO escapes a backslash, and the control characters above, with a backslash; other bytes pass as they are
 * (it writes no octal or hex escapes, which only COPY FROM reads).
 */
function unescapeCopy(field: string): string {
  return field.replace(/\\(.)/gs, (_, c: string) => ESCAPED[c] ?? c);
}

/**
 * The rows of a page of COPY text output, read one at a time into an array the caller reuses: fields are cut
 * with indexOf rather than a split of each line into a new array. A backslash starts every escape and every
 * null (`\N`), and most rows hold none: the page is searched for the next backslash once, so a row before it
 * takes its fields as they are, and only a row holding one is unescaped field by field.
 */
export class CopyText {
  private nextBackslash: number;

  constructor(readonly text: string) {
    this.nextBackslash = text.indexOf('\\');
  }

  /**
   * Reads the row starting at `start` into `out` and answers where the next row starts. A row must hold exactly
   * `out.length` fields (the columns the walk selected): anything else is an error, not a row read short.
   */
  row(start: number, out: Fields): number {
    const text = this.text;
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (this.nextBackslash !== -1 && this.nextBackslash < start) this.nextBackslash = text.indexOf('\\', start);
    const escaped = this.nextBackslash !== -1 && this.nextBackslash < end;
    let n = 0;
    for (let at = start; ; ) {
      let tab = text.indexOf('\t', at);
      if (tab === -1 || tab > end) tab = end;
      if (n === out.length) throw new Error(`a COPY row holds more than the ${out.length} fields selected`);
      const raw = text.slice(at, tab);
      out[n++] = !escaped ? raw : raw === '\\N' ? null : raw.includes('\\') ? unescapeCopy(raw) : raw;
      if (tab === end) break;
      at = tab + 1;
    }
    if (n !== out.length) throw new Error(`a COPY row holds ${n} fields, not the ${out.length} selected`);
    return end + 1;
  }

  /** How many rows start at or after `start`. */
  rowsFrom(start: number): number {
    let n = 0;
    for (let at = start; at < this.text.length; n++) {
      const end = this.text.indexOf('\n', at);
      at = end === -1 ? this.text.length : end + 1;
    }
    return n;
  }
}
