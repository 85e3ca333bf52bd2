export interface FairShare {
  /**
   * Jobs of one fair-share key (a tenant) a worker runs at once while another key's job waits; it must be below
   * the worker's concurrency. A key alone may go over it into idle slots (see `keepFree`).
   */
  maxActivePerKey: number;
  /**
   * Slots a key already at its share never takes, so that a key arriving while another borrows idle slots finds
   * this many free at once: jobs cannot be taken back once started, and a borrowed slot may be held for minutes.
   * Zero lets one key alone use every slot. @defaultValue maxActivePerKey
   */
  keepFree?: number;
  /** How long a job over its key's share waits before it is looked at again. @defaultValue 250 */
  deferMs?: number;
}

/** A job held back by the kept slots returns after at most this many `deferMs`. */
const KEPT_FREE_MAX_DEFERS = 4;
/**
 * How long past its job's return a key sent back still counts as waiting: its next deferral renews it, so this
 * only has to outlast a slow return (BullMQ's PostgreSQL backend moves due delayed jobs back on its next poll).
 */
const WAITING_GRACE_MS = 3_000;
/** How long this worker remembers a job it sent back, to double its wait: past any slow return of a loaded queue. */
const REMEMBER_MS = 30_000;

/**
 * One worker's count of running jobs by fair-share key, and the decision whether the job just picked may start.
 * Work-conserving: a key under its share always starts; a key at or over it borrows an idle slot when that
 * leaves `keepFree` slots free and no other key this worker deferred recently runs fewer jobs than it does
 * (max-min: two keys that both wait grow alike, and one that borrowed gives its slots back as its jobs end).
 *
 * The decision is made when BullMQ hands the job to the processor, from this process's counts only: no shared
 * state a dead worker could leave held, nothing that acts on a job BullMQ still tracks (a job sent back is
 * moved by the processor that holds its lock, as before). A worker learns that a key waits only by picking one
 * of its jobs and sending it back; until then the other key may borrow, and the kept slots are what lets the
 * waiting key's jobs be picked. What another process deferred is not seen here; each process keeps its own
 * `keepFree` slots for keys it has not met.
 */
export class FairShareSlots {
  private readonly active = new Map<string, number>();
  /** Keys this worker sent back, until when they count as waiting (`WAITING_GRACE_MS` past the job's return). */
  private readonly waitingUntil = new Map<string, number>();
  /** Jobs this worker sent back for the free slots kept, with that delay and when (to double it next time). */
  private readonly lastDeferral = new Map<string, { ms: number; at: number }>();
  private lastSweep = 0;
  /** Jobs in the processor now, with or without a key, the one being decided included. */
  private inFlight = 0;
  private readonly deferMs: number;
  private readonly keepFree: number;

  constructor(
    private readonly share: FairShare,
    private readonly concurrency: number,
    private readonly now: () => number = Date.now,
  ) {
    FairShareSlots.check(share);
    this.keepFree = share.keepFree ?? share.maxActivePerKey;
    this.deferMs = share.deferMs ?? 250;
  }

  /** Throws on a share that cannot work. */
  static check(share: FairShare): void {
    if (!Number.isInteger(share.maxActivePerKey) || share.maxActivePerKey < 1) throw new Error('fairShare.maxActivePerKey must be a positive integer');
    if (share.keepFree !== undefined && (!Number.isInteger(share.keepFree) || share.keepFree < 0)) throw new Error('fairShare.keepFree must be a non-negative integer');
  }

  /** A job entered the processor (every job, keyed or not: it holds one of the worker's slots). */
  enter(): void {
    this.inFlight++;
  }

  /** The job left the processor (finished, failed or sent back). */
  leave(): void {
    this.inFlight--;
  }

  /**
   * Takes a slot of `key` for job `jobId` and returns null, or says how long to send the job back for. Behind a
   * key that runs fewer jobs, the full `deferMs`: that key's jobs are to take the slots. Held back only by the
   * free slots kept, a slot may free any moment: a short wait, doubled each time the same job comes back to this
   * worker, up to 4 × `deferMs`. The kept slots are what picks and sends back a large backlog (a tenant's long
   * jobs filling the rest): the longer wait keeps it from cycling through them faster than they pick, which
   * would put every other tenant's job behind the whole backlog at each turn.
   */
  tryTake(key: string, jobId: string): number | null {
    const mine = this.active.get(key) ?? 0;
    const t = this.now();
    const take = () => {
      this.active.set(key, mine + 1);
      this.lastDeferral.delete(jobId);
      return null;
    };
    if (mine < this.share.maxActivePerKey) return take();
    if (this.fewerWaitingThan(key, mine, t)) return this.deferred(key, t, this.deferMs);
    // `inFlight` counts the job being decided: what stays free if it starts.
    if (this.concurrency - this.inFlight >= this.keepFree) return take();
    const last = this.lastDeferral.get(jobId);
    const ms = last && t - last.at < last.ms + REMEMBER_MS ? Math.min(KEPT_FREE_MAX_DEFERS * this.deferMs, last.ms * 2) : Math.max(1, Math.round(this.deferMs / 8));
    this.lastDeferral.set(jobId, { ms, at: t });
    return this.deferred(key, t, ms);
  }

  release(key: string): void {
    const left = (this.active.get(key) ?? 1) - 1;
    if (left > 0) this.active.set(key, left);
    else this.active.delete(key);
  }

  private deferred(key: string, t: number, ms: number): number {
    this.waitingUntil.set(key, t + ms + WAITING_GRACE_MS);
    // Jobs that went to another worker or were removed leave their entry: dropped once stale, at most once a second.
    if (t - this.lastSweep > 1_000) {
      this.lastSweep = t;
      for (const [id, d] of this.lastDeferral) if (t - d.at >= d.ms + REMEMBER_MS) this.lastDeferral.delete(id);
    }
    return ms;
  }

  /** Whether another key this worker sent back lately runs fewer jobs than `mine`: it comes first. */
  private fewerWaitingThan(key: string, mine: number, t: number): boolean {
    let found = false;
    for (const [other, until] of this.waitingUntil) {
      if (until <= t) this.waitingUntil.delete(other);
      else if (other !== key && (this.active.get(other) ?? 0) < mine) found = true;
    }
    return found;
  }
}
