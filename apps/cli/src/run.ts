import { isTransportError } from '@ito/client';
import { loadConfigOrUsage } from './config-or-usage.js';
import { CLIENT_MANIFEST_CODES, EXIT, ItoError, fail } from '@ito/contracts';
import type { ParsedCommand, UsageProblem } from './args/parse.js';
import { createContext } from './context.js';
import type { Handler } from './commands/handler.js';
import { emit, usageOutcome, type Outcome } from './output.js';

/** Handlers are imported on demand: a verb loads only what it needs. */
const HANDLERS: Record<string, () => Promise<Handler>> = {
  capabilities: async () => (await import('./commands/capabilities.js')).capabilitiesCommand,
  login: async () => (await import('./commands/identity.js')).loginCommand,
  logout: async () => (await import('./commands/identity.js')).logoutCommand,
  auth: async () => (await import('./commands/identity.js')).authCommand,
  'bookings list': async () => (await import('./commands/bookings.js')).bookingsListCommand,
  'bookings show': async () => (await import('./commands/bookings.js')).bookingsShowCommand,
  eligibility: async () => (await import('./commands/bookings.js')).eligibilityCommand,
  plan: async () => (await import('./commands/bookings.js')).planCommand,
  'confirm request': async () => (await import('./commands/confirm.js')).confirmRequestCommand,
  'confirm approve': async () => (await import('./commands/confirm.js')).confirmApproveCommand,
  'confirm deny': async () => (await import('./commands/confirm.js')).confirmDenyCommand,
  'confirm show': async () => (await import('./commands/confirm.js')).confirmShowCommand,
  train: async () => (await import('./commands/runs.js')).trainCommand,
  status: async () => (await import('./commands/runs.js')).statusCommand,
  logs: async () => (await import('./commands/runs.js')).logsCommand,
  metrics: async () => (await import('./commands/runs.js')).metricsCommand,
  checkpoints: async () => (await import('./commands/runs.js')).checkpointsCommand,
  events: async () => (await import('./commands/runs.js')).eventsCommand,
  cancel: async () => (await import('./commands/runs.js')).cancelCommand,
  cleanup: async () => (await import('./commands/runs.js')).cleanupCommand,
  restart: async () => (await import('./commands/runs.js')).restartCommand,
  'desk telemetry': async () => (await import('./commands/desk-audit.js')).deskTelemetryCommand,
  'audit verify': async () => (await import('./commands/audit-commands.js')).auditVerifyCommand,
  'audit export': async () => (await import('./commands/audit-commands.js')).auditExportCommand,
  'audit replay': async () => (await import('./commands/audit-commands.js')).auditReplayCommand,
};

function millis(raw: string | true | undefined, name: string, fallback: number): number | Outcome {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 && n <= 3_600_000 ? n : usageOutcome(`--${name} must be a positive integer number of milliseconds`);
}

/**
 * Turns anything a handler threw into an outcome; local refusals are marked as having contacted nothing. A
 * connection that never opened names the URL tried and the variable that points the CLI elsewhere: a server
 * started on another ITO_PORT is the usual reason.
 */
export function outcomeOfError(err: unknown, apiUrl?: string): Outcome {
  if (isTransportError(err)) {
    const envelope = err.toEnvelope();
    if (apiUrl && !err.liveApiContacted && !envelope.ok) {
      const hint = `tried ${apiUrl}; set ITO_API_URL to reach a server elsewhere (for example one started with another ITO_PORT)`;
      return { envelope: { ...envelope, error: { ...envelope.error, details: { ...envelope.error.details, hint } } } };
    }
    return { envelope };
  }
  if (err instanceof ItoError) {
    const manifest = (CLIENT_MANIFEST_CODES as readonly string[]).includes(err.code) || err.code === 'manifest_invalid';
    return {
      envelope: fail(err.code, err.message, { liveApiContacted: false, ...(err.details ? { details: err.details } : {}) }),
      ...(manifest ? { exit: EXIT.manifest_rejected } : {}),
    };
  }
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return { envelope: fail('internal_error', `the CLI failed locally${code ? ` (${code})` : ''}`, { liveApiContacted: false }) };
}

export async function runIto(parsed: ParsedCommand | UsageProblem): Promise<never> {
  if (parsed.kind === 'usage') {
    const hint = parsed.hint ?? (parsed.topic ? `run \`ito ${parsed.topic} --help\`` : 'run `ito --help`');
    return emit(usageOutcome(parsed.message, hint), parsed.json);
  }
  // Capabilities needs no credential, no network and no configuration: ECC runs it with an empty environment.
  if (parsed.verb.name === 'capabilities') return emit(await (await HANDLERS.capabilities!())(parsed, null as never), parsed.json);
  const loaded = loadConfigOrUsage();
  if ('outcome' in loaded) return emit(loaded.outcome, parsed.json);
  const { config } = loaded;
  const connect = millis(parsed.flags['connect-timeout'], 'connect-timeout', config.ITO_CONNECT_TIMEOUT_MS);
  if (typeof connect !== 'number') return emit(connect, parsed.json);
  const overall = millis(parsed.flags.timeout, 'timeout', config.ITO_REQUEST_TIMEOUT_MS);
  if (typeof overall !== 'number') return emit(overall, parsed.json);

  const ctx = createContext(config, { json: parsed.json, connectTimeoutMs: connect, timeoutMs: overall });
  let outcome: Outcome;
  try {
    const handler = await HANDLERS[parsed.verb.name]!();
    outcome = await handler(parsed, ctx);
  } catch (err) {
    outcome = outcomeOfError(err, config.ITO_API_URL);
  }
  return emit(outcome, parsed.json);
}
