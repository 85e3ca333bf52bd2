import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Paths pino removes from every log line. Credentials arrive in headers and in a few well-known body
 * fields; the list is deliberately broad because a leaked key in a log is forever.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-node-credential"]',
  'headers.authorization',
  'authorization',
  'password',
  'token',
  'key',
  'secret',
  'api_key',
  'apiKey',
  'requester_key',
  'approver_key',
  'node_credential',
  'credential',
  'connectionString',
  'databaseUrl',
  'ITO_API_KEY',
  'ITO_DATABASE_URL',
  'ITO_REDIS_URL',
  'ITO_NODE_CREDENTIAL',
  '*.password',
  '*.token',
  '*.secret',
  '*.key',
  '*.api_key',
  '*.requester_key',
  '*.approver_key',
  '*.node_credential',
  '*.credential',
  '*.connectionString',
];

/** A pino logger writing JSON to stderr with redaction always on. */
export function createLogger(opts: { level?: string; name?: string; destination?: pino.DestinationStream } = {}): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: opts.name ? { name: opts.name } : {},
  };
  return pino(options, opts.destination ?? pino.destination({ fd: 2, sync: false }));
}

/** Removes any user:password from a connection URL so it can be shown or logged. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = '***';
    if (u.username && u.password) u.username = u.username;
    return u.toString();
  } catch {
    return '[unparseable url]';
  }
}

export type { Logger };
