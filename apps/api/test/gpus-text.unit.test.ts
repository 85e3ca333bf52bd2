import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '@ito/contracts';
import { gpusTexts } from '../src/agent/gpus-text.js';
import { certainHeartbeats } from '../src/agent/heartbeat-body.js';

/**
 * Each beat's GPU list cut from a batch's JSON text is the text of exactly that beat's list (it parses to the
 * same list), however the agent laid the body out; a body it cannot cut with certainty answers undefined, and the
 * caller serialises the parsed lists instead.
 */
const TASK = 'tsk_0123456789abcdef0123456789abcdef';
const credential = (i: number) => `ito_nc_${String(i).padStart(43, 'A')}`;
const gpu = (i: number) => ({ index: i, healthy: i !== 3, temperature_c: 41.5 + i, utilization: 0.93, memory_used_gb: 70.1, ecc_errors: i });
const beats = [
  { credential: credential(0), tasks: [], gpus: Array.from({ length: 8 }, (_, i) => gpu(i)) },
  { gpus: [], tasks: [{ task_id: TASK, attempt: 1, step: 5 }], credential: credential(1) },
  { tasks: [], credential: credential(2), gpus: [{ index: 7, healthy: false }] },
];
const body = { beats };

const cut: Array<[string, string]> = [
  ['compact', JSON.stringify(body)],
  ['indented', JSON.stringify(body, null, 2)],
  ['tabs and newlines', JSON.stringify(body, null, '\t').replaceAll('\n', '\r\n')],
  ['space before the colon', JSON.stringify(body).replaceAll('"gpus":', '"gpus" :\n ')],
  ['a GPU key and numbers spelt otherwise', JSON.stringify(body).replaceAll('"index":7', '"ind\\u0065x":7e0').replaceAll('70.1', '7.01E1')],
];

describe('cutting each beat’s GPU list from a batch’s text', () => {
  it.each(cut)('%s: each cut parses to its own beat’s list', (_, text) => {
    const parsed = parseStrictJson(text);
    expect(parsed.ok && certainHeartbeats(parsed.value)).toBeTruthy();
    const texts = gpusTexts(text, beats.length);
    expect(texts?.map((t) => JSON.parse(t))).toEqual(beats.map((b) => b.gpus));
    // As one document too, the way the liveness statement sends them.
    expect(JSON.parse(`[${texts!.join(',')}]`)).toEqual(beats.map((b) => b.gpus));
  });

  it.each([
    ['a gpus key spelt with an escape', JSON.stringify(body).replace('"gpus"', '"gp\\u0075s"')],
    ['fewer beats than said', JSON.stringify({ beats: beats.slice(0, 2) })],
    ['more beats than said', JSON.stringify({ beats: [...beats, { ...beats[2]!, credential: credential(3) }] })],
  ])('%s: not cut (undefined)', (_, text) => {
    expect(gpusTexts(text, beats.length)).toBeUndefined();
  });
});
