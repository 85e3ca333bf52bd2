import { readFileSync } from 'node:fs';
import { parseManifest, type Manifest } from '@ito/contracts';
import type { BookingTopology } from '@ito/planner';

export const NOW = new Date('2026-12-01T00:00:00Z');
const DAY_MS = 86_400_000;

export function exampleManifest(): Manifest {
  const text = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
  const parsed = parseManifest(text);
  if (!parsed.ok) throw new Error(`example manifest does not parse: ${JSON.stringify(parsed.issues)}`);
  return parsed.manifest;
}

export function manifestWith(change: (m: Manifest) => void): Manifest {
  const m = structuredClone(exampleManifest());
  change(m);
  return m;
}

/** The example booking: 2 × 8 H200 on infiniband at $2.5/GPU-hour for a 30-day term starting now. */
export function booking(overrides: Partial<BookingTopology> = {}): BookingTopology {
  return {
    gpu: 'h200',
    nodes: 2,
    gpusPerNode: 8,
    fabric: 'infiniband',
    region: 'us-east-1',
    rateUsdPerGpuHour: 2.5,
    termStart: NOW,
    termEnd: new Date(NOW.getTime() + 30 * DAY_MS),
    ...overrides,
  };
}
