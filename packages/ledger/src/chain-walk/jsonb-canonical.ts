import { canonicalJson } from '../canonical-json.js';

/**
 * The canonical JSON (canonical-json.ts) of a jsonb column, from the text PostgreSQL writes for it, without
 * building the value: jsonb writes an object's keys shortest first (not in code-unit order), a space after each
 * colon and comma, and numbers as it stores them; canonical JSON sorts keys by UTF-16 code units, writes no
 * space, and numbers as ECMAScript does. The rewrite covers the text jsonb writes for common values; anything
 * else (a backslash, i.e. an escaped character, anywhere; a control character; spacing or a token jsonb would not
 * write; a repeated key) gives the text to JSON.parse and canonicalJson, the writer's own path, so the answer is
 * always what `canonicalJson(JSON.parse(text))` gives.
 *
 * A string without a backslash is written by JSON.stringify exactly as it appears between its quotes (JSON.stringify
 * escapes only a quote, a backslash, a control character and a lone surrogate, and a jsonb text holds none of
 * them unescaped), so strings and keys are copied as they are.
 */
export function canonicalJsonb(text: string): string {
  if (!ESCAPES.test(text)) {
    let out: string | null = null;
    try {
      out = new Rewrite(text).value();
    } catch {
      // Nesting deeper than this stack allows: JSON.parse's own limit decides.
    }
    if (out !== null) return out;
  }
  return canonicalJson(JSON.parse(text));
}

/** A backslash or a control character: left to JSON.parse. */
const ESCAPES = /[\\\u0000-\u001f]/;
/** A JSON number; one that is a plain integer of up to 15 digits is written by ECMAScript as it is. */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const PLAIN_INTEGER = /^(?:0|-?[1-9][0-9]{0,14})$/;

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;

/** A recursive-descent rewrite; null as soon as the text is not what jsonb writes (the caller then parses it). */
class Rewrite {
  private at = 0;

  constructor(private readonly text: string) {}

  value(): string | null {
    const out = this.any();
    return out !== null && this.at === this.text.length ? out : null;
  }

  private any(): string | null {
    const c = this.text.charCodeAt(this.at);
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === QUOTE) return this.string();
    if (c === 0x74) return this.literal('true');
    if (c === 0x66) return this.literal('false');
    if (c === 0x6e) return this.literal('null');
    return this.number();
  }

  private literal(word: string): string | null {
    if (!this.text.startsWith(word, this.at)) return null;
    this.at += word.length;
    return word;
  }

  private string(): string | null {
    const end = this.text.indexOf('"', this.at + 1);
    if (end === -1) return null;
    const out = this.text.slice(this.at, end + 1);
    this.at = end + 1;
    return out;
  }

  private number(): string | null {
    const start = this.at;
    const text = this.text;
    let i = start;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === 0x5d || c === 0x7d) break;
    }
    const token = text.slice(start, i);
    if (!JSON_NUMBER.test(token)) return null;
    this.at = i;
    if (PLAIN_INTEGER.test(token)) return token;
    const n = Number(token);
    return Number.isFinite(n) ? String(n) : 'null';
  }

  /** `, ` between members, or the closing bracket: true when another member follows. */
  private more(close: number): boolean | null {
    const c = this.text.charCodeAt(this.at);
    if (c === close) {
      this.at += 1;
      return false;
    }
    if (c !== COMMA || this.text.charCodeAt(this.at + 1) !== SPACE) return null;
    this.at += 2;
    return true;
  }

  private array(): string | null {
    this.at += 1;
    if (this.text.charCodeAt(this.at) === 0x5d) {
      this.at += 1;
      return '[]';
    }
    let out = '[';
    for (;;) {
      const v = this.any();
      if (v === null) return null;
      out += v;
      const more = this.more(0x5d);
      if (more === null) return null;
      if (!more) return `${out}]`;
      out += ',';
    }
  }

  private object(): string | null {
    this.at += 1;
    if (this.text.charCodeAt(this.at) === 0x7d) {
      this.at += 1;
      return '{}';
    }
    const keys: string[] = [];
    const members: string[] = [];
    let sorted = true;
    for (;;) {
      if (this.text.charCodeAt(this.at) !== QUOTE) return null;
      const key = this.string();
      if (key === null || this.text.charCodeAt(this.at) !== COLON || this.text.charCodeAt(this.at + 1) !== SPACE) return null;
      this.at += 2;
      const v = this.any();
      if (v === null) return null;
      // Keys hold no escape: the text between the quotes is the key, compared as canonicalJson sorts (code units).
      const name = key.slice(1, -1);
      if (keys.length > 0 && !(keys[keys.length - 1]! < name)) sorted = false;
      keys.push(name);
      members.push(`${key}:${v}`);
      const more = this.more(0x7d);
      if (more === null) return null;
      if (!more) break;
    }
    if (!sorted && !sortMembers(keys, members)) return null;
    return `{${members.join(',')}}`;
  }
}

/**
 * Sorts the members by key (code units, as canonicalJson sorts), in place: an insertion sort for the small
 * objects events mostly hold, Array.prototype.sort past that; false for a repeated key (which JSON.parse settles
 * by keeping the last, left to it).
 */
function sortMembers(keys: string[], members: string[]): boolean {
  if (keys.length > 32) {
    const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    const sortedKeys = order.map((i) => keys[i]!);
    const sortedMembers = order.map((i) => members[i]!);
    for (let i = 0; i < order.length; i++) {
      if (i > 0 && sortedKeys[i - 1] === sortedKeys[i]) return false;
      keys[i] = sortedKeys[i]!;
      members[i] = sortedMembers[i]!;
    }
    return true;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    const member = members[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) {
      keys[j + 1] = keys[j]!;
      members[j + 1] = members[j]!;
    }
    if (j >= 0 && keys[j] === key) return false;
    keys[j + 1] = key;
    members[j + 1] = member;
  }
  return true;
}
