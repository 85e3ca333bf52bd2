import { ConfigError, loadConfig, type ItoConfig } from '@ito/config';
import { usageOutcome, type Outcome } from './output.js';

/** The environment, or the usage outcome naming the bad variable: both entry points answer a bad value alike. */
export function loadConfigOrUsage(): { config: ItoConfig } | { outcome: Outcome } {
  try {
    return { config: loadConfig() };
  } catch (err) {
    if (err instanceof ConfigError) return { outcome: usageOutcome(err.message) };
    throw err;
  }
}
