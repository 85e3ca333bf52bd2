/**
 * Each beat's `gpus` list as the JSON text the agent sent, cut from a heartbeat body, so the liveness writer
 * stores those bytes instead of serialising the parsed list again (JSON.stringify of eight GPUs was the largest
 * per-beat cost of building the liveness statement). The column keeps the text as given (it is `text`), and a
 * reader of `health::json` gets the same list.
 *
 * Only for a body `certainHeartbeats` (or, for one beat, `certainHeartbeat`) accepted, parsed from `text`: there
 * every string value is a credential or a task id (neither can hold a quote or a bracket) and every key is a
 * known name, so the literal `"gpus"` occurs only as a beat's own key, once per beat, in the beats' order; and a
 * GPU holds only numbers and booleans, so the first `]` after its list opens closes it. A key spelt with escapes
 * (`"gp\u0075s"`) is not found by its literal: then the count differs and the answer is undefined, and the
 * caller serialises the parsed lists as before.
 */
export function gpusTexts(text: string, beats: number): string[] | undefined {
  const out = new Array<string>(beats);
  let at = 0;
  for (let i = 0; i < beats; i++) {
    const key = text.indexOf('"gpus"', at);
    if (key < 0) return undefined;
    let j = skipSpace(text, key + 6);
    if (text.charCodeAt(j) !== 0x3a /* : */) return undefined;
    j = skipSpace(text, j + 1);
    if (text.charCodeAt(j) !== 0x5b /* [ */) return undefined;
    const end = text.indexOf(']', j);
    if (end < 0) return undefined;
    out[i] = text.slice(j, end + 1);
    at = end + 1;
  }
  return text.indexOf('"gpus"', at) < 0 ? out : undefined;
}

function skipSpace(text: string, from: number): number {
  let j = from;
  for (;;) {
    const c = text.charCodeAt(j);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return j;
    j++;
  }
}
