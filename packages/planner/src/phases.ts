import type { Manifest } from '@ito/contracts';
import { PLAN_ASSUMPTIONS as A } from './assumptions.js';

/** Training-equivalent tokens of one part of the run, and the sequence length it trains at. */
export interface TokenPhase {
  phase: string;
  /** 'main' trains at target.sequence_length, 'long' at target.long_context_length. */
  stage: 'main' | 'long';
  tokens: number;
  /** How the token count was arrived at, for the plan's reasons. */
  basis: string;
}

const MAIN_STAGES = ['pretrain', 'mid_train'] as const;

function tokensOf(manifest: Manifest, ref: string): number | undefined {
  return manifest.data.find((d) => d.ref === ref)?.tokens;
}

/**
 * Splits the run into phases. target.tokens covers pretrain, mid_train and long_context; long context takes a
 * fixed share (all of it when it is the only token stage). Post-training stages are costed from their own
 * data when the manifest lists it, otherwise from stated shares of the target tokens.
 */
export function tokenPhases(manifest: Manifest): TokenPhase[] {
  const { curriculum, tokens } = manifest.target;
  const main = MAIN_STAGES.filter((s) => curriculum.includes(s));
  const hasLong = curriculum.includes('long_context');
  const longShare = hasLong ? (main.length > 0 ? A.longContextTokenFraction : 1) : 0;
  const phases: TokenPhase[] = [];
  if (main.length > 0) {
    phases.push({ phase: main.join('+'), stage: 'main', tokens: Math.round(tokens * (1 - longShare)), basis: `target tokens less the long-context share (${longShare * 100}%)` });
  }
  if (hasLong) {
    phases.push({ phase: 'long_context', stage: 'long', tokens: Math.round(tokens * longShare), basis: `${longShare * 100}% of the target tokens` });
  }
  if (!curriculum.includes('post_training')) return phases;

  const unknown = Math.round(tokens * A.unknownPostTrainingDataFraction);
  for (const step of manifest.post_training.recipe) {
    switch (step.stage) {
      case 'sft': {
        const known = tokensOf(manifest, step.data_ref);
        phases.push({
          phase: 'sft',
          stage: 'main',
          tokens: (known ?? unknown) * step.epochs,
          basis: known === undefined ? `${step.epochs} epoch(s) of an unlisted data set assumed at ${A.unknownPostTrainingDataFraction * 100}% of the target tokens` : `${step.epochs} epoch(s) of ${known} listed tokens`,
        });
        break;
      }
      case 'dpo': {
        const known = tokensOf(manifest, step.data_ref);
        phases.push({
          phase: 'dpo',
          stage: 'main',
          tokens: Math.round((known ?? unknown) * A.dpoComputeFactor),
          basis: `${known === undefined ? `unlisted data assumed at ${A.unknownPostTrainingDataFraction * 100}% of the target tokens` : `${known} listed tokens`}, ×${A.dpoComputeFactor.toFixed(2)} for the reference model's forward`,
        });
        break;
      }
      case 'rlvr':
        phases.push({ phase: 'rlvr', stage: 'main', tokens: Math.round(tokens * A.rlvrTokenFraction), basis: `${A.rlvrTokenFraction * 100}% of the target tokens as training-equivalent compute, rollouts included` });
        break;
      default: {
        const exhaustive: never = step;
        throw new Error(`unhandled post-training stage ${String(exhaustive)}`);
      }
    }
  }
  return phases;
}
