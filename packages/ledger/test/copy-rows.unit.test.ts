import { describe, expect, it } from 'vitest';
import { compareIntegers } from '../src/audit/link-rules.js';
import { tenantLinkHash, tenantLinkHashOf } from '../src/audit/tenant-link.js';
import { canonicalJson } from '../src/canonical-json.js';
import { CopyText, type Fields } from '../src/chain-walk/copy-text.js';
import { walkRawPage } from '../src/chain-walk/pages.js';
import { contentHash, contentHashOfTexts, linkHash, linkHashOf } from '../src/hashing.js';

/**
 * A walk reads COPY's text output itself (copy-text.ts, pages.ts): fields cut by tabs, escapes undone only in
 * rows that hold a backslash, jsonb text canonicalised. These pages are written here as PostgreSQL writes them,
 * with the hashes the writer's own functions give, so a field read wrongly is a "does not match" and a field
 * changed after sealing must still be one.
 */

/** A value as COPY's text format writes it: `\N` for null, a backslash before a backslash and the control characters. */
function copyField(v: string | number | boolean | null): string {
  if (v === null) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  const esc: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v' };
  return String(v).replace(/[\\\t\n\r\b\f\v]/g, (c) => esc[c]!);
}
const copyRow = (values: (string | number | boolean | null)[]) => `${values.map(copyField).join('\t')}\n`;
const page = (rows: string[]) => new TextEncoder().encode(rows.join(''));

/** jsonb writes keys shortest first, with a space after each colon and comma: not the canonical text. */
function jsonbText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort((a, b) => a.length - b.length || (Buffer.from(a) < Buffer.from(b) ? -1 : 1));
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${jsonbText((value as Record<string, unknown>)[k])}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

const ODD = ['tab\there', 'back\\slash', 'new\nline', 'cr\rlf', 'bs\bff\fvt\v', '\\N', 'ctl\u0001\u001f', '', 'é"\'€😀', 'quote"', '\u2028'];
const AT = '2026-12-06 09:17:59.945+00';
const AT_DATE = new Date('2026-12-06T09:17:59.945Z');

interface Ev {
  stream: string;
  type: string;
  tenant: string;
  data: unknown;
  metadata: unknown;
}

function events(): Ev[] {
  return ODD.flatMap((s, i) => [
    { stream: `s-${s}`, type: `T${s}`, tenant: `ten${s}`, data: { [s || 'empty']: s, list: [s, i, 2.5, { nested: s }], zz: -0.5, a: 1e21 }, metadata: { actor: s } },
    // Plain rows between the odd ones: a row with no backslash after one with some (and before the next).
    { stream: `plain-${i}`, type: 'Plain', tenant: 'ten-plain', data: { i }, metadata: { actor: 'same' } },
  ]);
}

/** Global rows: seq, position, chain txid, prev_hash, hash, present, txid, stream, version, tenant, type, schema, data, metadata, recorded_at. */
function globalPage(evs: Ev[], edit?: (row: (string | number | boolean | null)[], i: number) => void): Uint8Array {
  let prev: string | null = null;
  return page(
    evs.map((e, i) => {
      const content = contentHash({ tenantId: e.tenant, streamId: e.stream, type: e.type, schemaVersion: 1, data: e.data, metadata: e.metadata, recordedAt: AT_DATE });
      const hash = linkHash({ seq: i + 1, position: 10 + i, transactionId: `${900 + i}`, streamVersion: 1, contentHash: content, prevHash: prev });
      const row: (string | number | boolean | null)[] = [i + 1, 10 + i, `${900 + i}`, prev, hash, true, `${900 + i}`, e.stream, 1, e.tenant, e.type, 1, jsonbText(e.data), jsonbText(e.metadata), AT];
      prev = hash;
      edit?.(row, i);
      return copyRow(row);
    }),
  );
}

/** Tenant rows: tenant_seq, position, prev_hash, hash, present, stream, version, type, schema, data, metadata, recorded_at. */
function tenantPage(tenant: string, evs: Ev[], edit?: (row: (string | number | boolean | null)[], i: number) => void): Uint8Array {
  let prev: string | null = null;
  return page(
    evs.map((e, i) => {
      const content = contentHash({ tenantId: tenant, streamId: e.stream, type: e.type, schemaVersion: 1, data: e.data, metadata: e.metadata, recordedAt: AT_DATE });
      const hash = tenantLinkHash({ tenantId: tenant, tenantSeq: i + 1, position: 10 + i, streamVersion: 1, contentHash: content, prevHash: prev });
      const row: (string | number | boolean | null)[] = [i + 1, 10 + i, prev, hash, true, e.stream, 1, e.type, 1, jsonbText(e.data), jsonbText(e.metadata), AT];
      prev = hash;
      edit?.(row, i);
      return copyRow(row);
    }),
  );
}

describe('COPY text rows', () => {
  it('reads each field back as it was written, escapes undone, `\\N` null and `\\\\N` the text', () => {
    const values = [...ODD, null, '\\N', 'plain'];
    const rows = [copyRow(['a', 'b', 'c']), copyRow(values.slice(0, 3)), copyRow(['x', 'y', 'z']), ...Array.from({ length: values.length / 2 }, (_, i) => copyRow([values[i]!, 'mid', values[values.length - 1 - i]!]))];
    const text = new CopyText(rows.join(''));
    const out: Fields = [null, null, null];
    const read: Fields[] = [];
    for (let at = 0; at < text.text.length; ) {
      at = text.row(at, out);
      read.push([...out]);
    }
    expect(read).toEqual([['a', 'b', 'c'], values.slice(0, 3), ['x', 'y', 'z'], ...Array.from({ length: values.length / 2 }, (_, i) => [values[i]!, 'mid', values[values.length - 1 - i]!])]);
    expect(text.rowsFrom(0)).toBe(read.length);
  });

  it('refuses a row with more or fewer fields than selected, rather than reading the last row’s values', () => {
    const out: Fields = [null, null, null];
    expect(() => new CopyText('a\tb\n').row(0, out)).toThrow(/2 fields, not the 3/);
    expect(() => new CopyText('a\tb\tc\td\n').row(0, out)).toThrow(/more than the 3/);
  });
});

describe('walking a page of COPY rows', () => {
  const evs = events();

  it('accepts intact rows whatever they hold, on the global chain and on a tenant’s', () => {
    expect(walkRawPage({ chain: 'global' }, globalPage(evs))).toMatchObject({ count: evs.length, failure: null, last: { seq: evs.length } });
    const tenant = "ten'\\odd\t€";
    expect(walkRawPage({ chain: 'tenant', tenantId: tenant }, tenantPage(tenant, evs))).toMatchObject({ count: evs.length, failure: null, last: { seq: evs.length } });
  });

  it('names a field changed after sealing, in every column the hash covers', () => {
    const target = 4; // an odd row (escapes) right after a plain one
    const changes: [number, (v: unknown) => unknown][] = [
      [7, (v) => `${v}\\`], // stream id
      [9, (v) => `${v}x`], // tenant id
      [10, (v) => `${v}"`], // type
      [12, () => jsonbText({ ...(evs[target]!.data as object), zz: -0.25 })], // data
      [13, () => jsonbText({ actor: 'same' })], // metadata: the text of the row before, kept by the walk
      [14, () => '2026-12-06 09:17:59.946+00'], // recorded_at
      [8, () => 2], // stream version
      [11, () => 2], // schema version
    ];
    for (const [column, change] of changes) {
      const out = walkRawPage({ chain: 'global' }, globalPage(evs, (row, i) => i === target && (row[column] = change(row[column]) as string)));
      expect(out.failure, `column ${column}`).toEqual({ index: target, position: 10 + target, reason: `event at position ${10 + target} does not match its sealed hash` });
    }
    const tenant = 'ten-t';
    for (const [column, change] of [[5, (v: unknown) => `${v}\t`], [9, () => jsonbText({ ...(evs[target]!.data as object), a: 1e20 })], [10, () => jsonbText({ actor: 'same' })]] as const) {
      const out = walkRawPage({ chain: 'tenant', tenantId: tenant }, tenantPage(tenant, evs, (row, i) => i === target && (row[column] = change(row[column]) as string)));
      expect(out.failure, `tenant column ${column}`).toEqual({ index: target, position: 10 + target, reason: `the event at position ${10 + target} does not match its sealed hash` });
    }
  });

  it('hashes jsonb’s text as the value it holds: the same value written with other key order and spacing still matches', () => {
    const reordered = globalPage(evs, (row) => (row[12] = JSON.stringify(JSON.parse(row[12] as string), null, 1)));
    expect(walkRawPage({ chain: 'global' }, reordered)).toMatchObject({ count: evs.length, failure: null });
  });

  it('counts the rows after a failing one without walking them', () => {
    const out = walkRawPage({ chain: 'global' }, globalPage(evs, (row, i) => i === 1 && (row[7] = 'other')));
    expect(out).toMatchObject({ count: evs.length, failure: { index: 1 }, last: null });
  });
});

describe('the hashes a walk builds from texts', () => {
  const strings = ['plain', '', 'quote"', 'back\\slash', 'tab\t', 'nul\u0000', 'unit\u001f', 'é€😀', 'lone\ud800', '\u2028'];

  it('are the writer’s contentHash, linkHash and tenantLinkHash, whatever the strings and numbers hold', () => {
    for (const s of strings) {
      const data = { [s]: [s, 1.5, -0, 1e21, null, true] };
      const metadata = { actor: s };
      for (const recordedAt of [AT_DATE, new Date('+010000-01-01T00:00:00.000Z')]) {
        const content = contentHash({ tenantId: s, streamId: s, type: s, schemaVersion: 3, data, metadata, recordedAt });
        expect(contentHashOfTexts(canonicalJson(data), canonicalJson(metadata), recordedAt, 3, s, s, s), JSON.stringify(s)).toBe(content);
        for (const prevHash of [null, s]) {
          expect(linkHashOf(content, 12, prevHash, 7, 2, s)).toBe(linkHash({ seq: 7, position: 12, transactionId: s, streamVersion: 2, contentHash: content, prevHash }));
          expect(tenantLinkHashOf(content, 12, prevHash, 2, s, 7)).toBe(tenantLinkHash({ tenantId: s, tenantSeq: 7, position: 12, streamVersion: 2, contentHash: content, prevHash }));
        }
      }
    }
    expect(linkHashOf('c', Number.NaN, null, 2 ** 60, null, null)).toBe(
      linkHash({ seq: 2 ** 60, position: Number.NaN, transactionId: null as unknown as string, streamVersion: null as unknown as number, contentHash: 'c', prevHash: null }),
    );
  });
});

describe('compareIntegers', () => {
  it('orders decimal texts as the integers they write, past the safe range and with signs', () => {
    const ordered = ['-100', '-99', '-1', '0', '7', '9', '10', '99', '100', '9007199254740993', '9007199254740994', '18446744073709551615'];
    for (const [i, a] of ordered.entries()) {
      for (const [j, b] of ordered.entries()) expect(compareIntegers(a, b), `${a} vs ${b}`).toBe(Math.sign(i - j));
    }
    expect(() => compareIntegers('1x', '2')).toThrow(SyntaxError);
  });
});
