import type { Logger } from '@ito/config';

/**
 * Placeholder for the heartbeat (SLO) monitor role: it declares nodes lost after missed heartbeats once the
 * agent protocol lands. Until then the role starts nothing and says so.
 */
export function startMonitorRole(logger: Logger): { stop(): void } {
  logger.warn({ role: 'monitor' }, 'the heartbeat monitor is not implemented yet; the monitor role does nothing');
  // Keeps a monitor-only process alive until it is told to stop, as the real monitor's timers will.
  const keepAlive = setInterval(() => undefined, 60_000);
  return { stop: () => clearInterval(keepAlive) };
}
