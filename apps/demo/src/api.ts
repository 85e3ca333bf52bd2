import type { Envelope } from '@ito/contracts';

/** The few reads the demo makes itself (to time its fault and write its summary), with the requester's key. */
export function apiReader(baseUrl: string, key: string) {
  return async function get<T>(path: string): Promise<T> {
    const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as Envelope<T>;
    if (!body.ok) throw new Error(`${body.error.code}: ${body.error.message}`);
    return body.data;
  };
}

export type ApiGet = ReturnType<typeof apiReader>;

export interface RunView {
  run_id: string;
  state: string;
  stage?: string | null;
  progress?: { stage?: string; step?: number; total_steps?: number } | null;
}

export interface LogPage {
  lines: Array<{ cursor: number; at: string; type: string; message: string }>;
  next_cursor: number;
}

/** Waits until the server answers /readyz, or gives up naming the log to read. */
export async function waitReady(baseUrl: string, alive: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive()) return false;
    try {
      if ((await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}
