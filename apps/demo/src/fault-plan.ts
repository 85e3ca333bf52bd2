import type { RunView } from './api.js';

/**
 * When the demo pulls a node: once, in the first training stage, after a few checkpoints of that stage have
 * been saved, so there is one to resume from and the resume is worth watching.
 */
export class FaultPlan {
  private checkpointsAtPretrain: number | null = null;
  private fired = false;

  constructor(private readonly afterCheckpoints = 3) {}

  /** `checkpointsSeen`: every CheckpointSaved of the run so far. True exactly once, when the node goes. */
  shouldPull(run: RunView, checkpointsSeen: number): boolean {
    if (this.fired || run.state !== 'training' || run.stage !== 'pretrain') return false;
    this.checkpointsAtPretrain ??= checkpointsSeen;
    if (checkpointsSeen - this.checkpointsAtPretrain < this.afterCheckpoints) return false;
    this.fired = true;
    return true;
  }
}
