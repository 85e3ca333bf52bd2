/**
 * Counts events per key in fixed windows, in memory, with a bounded number of keys (the oldest window is
 * dropped first), so a flood of distinct keys costs memory no larger than `maxKeys` entries.
 */
export class WindowCounter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 10_000,
  ) {}

  /** Seconds until `key` may go on, or 0 when it is under its budget. */
  retryAfterSeconds(key: string): number {
    const w = this.current(key);
    return w && w.count >= this.max ? Math.max(1, Math.ceil((w.startedAt + this.windowMs - this.now()) / 1000)) : 0;
  }

  record(key: string): void {
    const w = this.current(key);
    if (w) {
      w.count++;
      return;
    }
    if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(key, { startedAt: this.now(), count: 1 });
  }

  private current(key: string) {
    const w = this.windows.get(key);
    if (!w) return undefined;
    if (this.now() - w.startedAt >= this.windowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }
}
