/**
 * Figures as people read them, for human output only: `--json` and the ledger keep the exact values. Decimal
 * units, as storage and network bandwidth are sold (112000000000 bytes is 112 GB).
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  const shown = unit === 0 ? String(value) : value.toLocaleString('en-US', { maximumFractionDigits: value < 10 ? 2 : value < 100 ? 1 : 0 });
  return `${bytes < 0 ? '-' : ''}${shown} ${units[unit]}`;
}

/** A training loss to four decimals: enough to see it move, not the sixteen digits a double carries. */
export function formatLoss(loss: number): string {
  return Number.isFinite(loss) ? loss.toFixed(4) : String(loss);
}
