import { parseStrictJson } from '@ito/contracts';

/** One item of an eval battery: what a training document must not contain. */
export interface BatteryItem {
  id: string;
  task: string;
  text: string;
}

export interface Battery {
  /** Name and version, as a manifest's eval.battery names it: `ito-evals/v1`. */
  name: string;
  items: BatteryItem[];
}

export class BatteryError extends Error {
  override readonly name = 'BatteryError';
}

const ITEM_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;
/** A battery is a reviewed file of a few thousand items at most; more is a wrong file, not a bigger battery. */
export const MAX_BATTERY_ITEMS = 100_000;
const MAX_ITEM_CHARS = 1_000_000;

/**
 * A battery file: JSON lines, one item each, `{"id", "task", "text"}` and nothing else. Errors name the line,
 * never its content.
 */
export function parseBattery(name: string, text: string): Battery {
  const items: BatteryItem[] = [];
  const ids = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const where = `battery line ${i + 1}`;
    const parsed = parseStrictJson(line);
    if (!parsed.ok) throw new BatteryError(`${where} is not JSON: ${parsed.error.message}`);
    const v = parsed.value as Record<string, unknown>;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BatteryError(`${where} is not an object`);
    const keys = Object.keys(v).sort().join(',');
    if (keys !== 'id,task,text') throw new BatteryError(`${where} must have exactly the keys id, task and text`);
    if (typeof v.id !== 'string' || !ITEM_ID.test(v.id)) throw new BatteryError(`${where}: id must be a lower-case name of at most 128 characters`);
    if (typeof v.task !== 'string' || !ITEM_ID.test(v.task)) throw new BatteryError(`${where}: task must be a lower-case name`);
    if (typeof v.text !== 'string' || v.text.length === 0 || v.text.length > MAX_ITEM_CHARS) throw new BatteryError(`${where}: text must be a non-empty string`);
    if (ids.has(v.id)) throw new BatteryError(`${where}: item id repeats an earlier line`);
    ids.add(v.id);
    items.push({ id: v.id, task: v.task, text: v.text });
    if (items.length > MAX_BATTERY_ITEMS) throw new BatteryError(`the battery has more than ${MAX_BATTERY_ITEMS} items`);
  }
  if (items.length === 0) throw new BatteryError('the battery has no items');
  return { name, items };
}
