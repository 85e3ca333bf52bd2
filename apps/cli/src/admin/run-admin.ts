import { createLogger } from '@ito/config';
import { loadConfigOrUsage } from '../config-or-usage.js';
import { ItoError, fail, ok } from '@ito/contracts';
import type { ParsedCommand, UsageProblem } from '../args/parse.js';
import { emit, usageOutcome, type Outcome } from '../output.js';
import { openBatteryRegistry } from './battery-commands.js';
import { ADMIN_HANDLERS } from './commands.js';
import { ledgerConnection } from './connection.js';

/**
 * Runs one ito-admin verb on the ledger database. Unlike `ito`, nothing here travels over the API: the
 * envelope's live_api_contacted is false, and a database that cannot be reached is a transport failure.
 */
export async function runAdmin(parsed: ParsedCommand | UsageProblem): Promise<never> {
  if (parsed.kind === 'usage') {
    return emit(usageOutcome(parsed.message, parsed.topic ? `run \`ito-admin ${parsed.topic} --help\`` : 'run `ito-admin --help`'), parsed.json);
  }
  const loaded = loadConfigOrUsage();
  if ('outcome' in loaded) return emit(loaded.outcome, parsed.json);
  const { config } = loaded;
  const handler = ADMIN_HANDLERS[parsed.verb.name]!;
  let outcome: Outcome;
  let pool: { end(): Promise<void> } | null = null;
  try {
    const url = await ledgerConnection(config);
    const [{ default: pg }, { createAdminService }] = await Promise.all([import('pg'), import('@ito/runs')]);
    const p = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: config.ITO_CONNECT_TIMEOUT_MS });
    // A connection the server ends while idle surfaces through the next query instead of crashing the tool.
    p.on('error', () => undefined);
    pool = p;
    const logger = createLogger({ level: config.ITO_LOG_LEVEL, name: 'ito-admin' });
    const admin = createAdminService({ pool: p, logger });
    const batteries = () => openBatteryRegistry(p, config);
    const result = await handler(parsed, admin, { embeddedHome: config.ITO_DATABASE_URL ? null : config.ITO_HOME, batteries });
    outcome = { envelope: ok(result.data, { liveApiContacted: false }), human: result.human };
  } catch (err) {
    outcome = { envelope: adminFailure(err) };
  } finally {
    await pool?.end().catch(() => undefined);
  }
  return emit(outcome, parsed.json);
}

function adminFailure(err: unknown) {
  if (err instanceof ItoError) return fail(err.code, err.message, { liveApiContacted: false, ...(err.details ? { details: err.details } : {}) });
  const code = (err as NodeJS.ErrnoException | null)?.code;
  // Connection failures from pg carry only an errno code; their messages may name the host, never the password.
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || /timeout/i.test(String((err as Error)?.message))) {
    return fail('connect_failed', `could not reach the ledger database (${code ?? 'timeout'})`, { liveApiContacted: false });
  }
  return fail('internal_error', `ito-admin failed${code ? ` (${code})` : ''}`, { liveApiContacted: false });
}
