import type { Logger } from '@ito/config';

/** A named readiness probe; `/readyz` is green only when every probe resolves. */
export interface ReadinessProbe {
  name: string;
  check: () => Promise<void>;
}

/** What the API needs from the process that hosts it (apps/server wires these). */
export interface ApiDeps {
  logger: Logger;
  readiness: ReadinessProbe[];
}
