/**
 * "Did you mean": the known name nearest to what was typed, by edit distance, when it is near enough to be a
 * typo (one edit for names of up to four characters, two for longer). No imports, so the CLI's argument parser
 * can use it without loading a schema.
 */
export function nearestName(typed: string, known: Iterable<string>): string | null {
  const allowed = typed.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = allowed + 1;
  for (const name of known) {
    if (name === typed || Math.abs(name.length - typed.length) > allowed) continue;
    const d = editDistance(typed, name);
    if (d < bestDistance || (d === bestDistance && best !== null && name < best)) {
      best = name;
      bestDistance = d;
    }
  }
  return bestDistance <= allowed ? best : null;
}

/** Levenshtein distance with adjacent transpositions counted as one edit (`epcohs` is one edit from `epochs`). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
