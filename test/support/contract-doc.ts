import { readFileSync } from 'node:fs';

/** docs/contract.md of this repository: the tests that hold the code to it read it here. */
export const CONTRACT_DOC = readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8');

/** The text under one `##` or `###` heading, up to the next heading (its subsections are sections of their own). */
export function section(doc: string, heading: string): string {
  const lines = doc.split('\n');
  const isHeading = (l: string) => /^#{2,3} /.test(l);
  const start = lines.findIndex((l) => isHeading(l) && l.replace(/^#+ /, '') === heading);
  if (start === -1) throw new Error(`docs/contract.md has no section "${heading}"`);
  const end = lines.findIndex((l, i) => i > start && isHeading(l));
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/**
 * The body rows of the markdown tables in a section, as trimmed cells. `\|` inside a cell is a literal bar.
 * Header rows (followed by a `---` row) and the separators themselves are left out.
 */
export function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const rows: string[][] = [];
  lines.forEach((line, i) => {
    if (!line.startsWith('|')) return;
    if (/^\|[\s|:-]+\|$/.test(line)) return;
    if (/^\|[\s|:-]+\|$/.test(lines[i + 1] ?? '')) return;
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
    rows.push(cells);
  });
  return rows;
}

/** A cell's code span without its backticks (`` `not_found` `` → `not_found`). */
export function code(cell: string): string {
  const m = /^`([^`]+)`$/.exec(cell);
  if (!m) throw new Error(`expected a code span, got ${cell}`);
  return m[1]!;
}
