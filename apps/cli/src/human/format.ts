/** Formatting for people: aligned tables, key/value blocks, relative times, optional colour. Pure functions. */

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

export function relativeTime(iso: string, now: number = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const diff = t - now;
  const abs = Math.abs(diff);
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  const [size, unit] = units.find(([s]) => abs >= s) ?? [1000, 's'];
  const n = Math.floor(abs / size);
  if (n === 0) return 'now';
  return diff >= 0 ? `in ${n}${unit}` : `${n}${unit} ago`;
}

export function cell(value: unknown, now?: number): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return ISO.test(value) ? `${value} (${relativeTime(value, now)})` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function table(rows: Record<string, unknown>[], columns: string[], now?: number): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((r) => columns.map((c) => cell(r[c], now)));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return `${[line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n')}\n`;
}

export function keyValue(data: Record<string, unknown>, now?: number): string {
  const keys = Object.keys(data);
  if (keys.length === 0) return '(empty)\n';
  const width = Math.max(...keys.map((k) => k.length));
  return `${keys.map((k) => `${k.padEnd(width)}  ${cell(data[k], now)}`).join('\n')}\n`;
}

/** Columns present in at least one row, preferring the given order. */
export function columnsOf(rows: Record<string, unknown>[], preferred: string[]): string[] {
  const present = new Set(rows.flatMap((r) => Object.keys(r)));
  const chosen = preferred.filter((c) => present.has(c));
  return chosen.length > 0 ? chosen : [...present].slice(0, 6);
}

export function paint(enabled: boolean, code: 'green' | 'red' | 'yellow' | 'dim', text: string): string {
  if (!enabled) return text;
  const codes = { green: 32, red: 31, yellow: 33, dim: 2 } as const;
  return `\u001b[${codes[code]}m${text}\u001b[0m`;
}

/** The one-line progress summary for `status --watch` and `logs --follow`. */
export function progressLine(run: Record<string, unknown>): string {
  const p = (typeof run.progress === 'object' && run.progress !== null ? run.progress : run) as Record<string, unknown>;
  const parts = [`state ${String(run.state ?? '?')}`];
  const stage = run.stage ?? p.stage;
  if (stage) parts.push(`stage ${String(stage)}`);
  if (p.step !== undefined) parts.push(`step ${String(p.step)}${p.total_steps !== undefined ? `/${String(p.total_steps)}` : ''}`);
  if (p.tokens !== undefined) parts.push(`tokens ${String(p.tokens)}`);
  if (p.loss !== undefined) parts.push(`loss ${typeof p.loss === 'number' ? p.loss.toFixed(4) : String(p.loss)}`);
  const eta = p.eta_seconds ?? p.eta_s;
  if (typeof eta === 'number') parts.push(`ETA ${formatDuration(eta)}`);
  // What blocks the run, in the server's words ("waiting for nodes: 0 of 2 live", "waiting for first step on …").
  const waiting = Array.isArray(run.waiting) ? (run.waiting as Array<{ reason?: unknown; message?: unknown }>) : [];
  for (const w of waiting) if (typeof w?.message === 'string') parts.push(w.message);
  // A server that names the start-up wait only as `waiting_for` (no `first_step` member in the list) is still heard.
  if (typeof run.waiting_for === 'string' && !waiting.some((w) => w?.reason === 'first_step')) parts.push(`waiting for ${run.waiting_for}`);
  return parts.join(' · ');
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(s % 60).padStart(2, '0')}s`;
}

/** Indents every non-empty line by two spaces, for a section under a heading. */
export function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');
}
