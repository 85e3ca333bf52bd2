import { loadConfig } from '@ito/config';
import type { SloTargets } from '@ito/domain';

let cached: SloTargets | null = null;

/**
 * The SLO targets of this process. Every role that appends to runs (API, stage workers, monitor) goes through
 * `appendRunEvents`, and each is configured from the same environment, which its entry point has already
 * validated (a bad value stopped it there); so this reads the environment once rather than threading the
 * targets through every writer.
 */
export function processSloTargets(): SloTargets {
  if (!cached) {
    const cfg = loadConfig();
    cached = { detection_s: cfg.ITO_SLO_DETECTION_TARGET_S, resume_s: cfg.ITO_SLO_RESUME_TARGET_S };
  }
  return cached;
}
