import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';

/**
 * Every process reads its configuration from the environment only (12-factor), validated here once at start.
 * A bad value stops the process with one line naming the variable; the value itself is never echoed, since
 * some of these variables hold credentials.
 */
const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `expected a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`);

const positiveNumber = z.coerce.number().positive();
const port = z.coerce.number().int().min(0).max(65535);

export const envSchema = z.object({
  ITO_HOME: z.string().min(1).optional(),
  ITO_TOKEN_FILE: z.string().min(1).optional(),
  ITO_DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
  ITO_REDIS_URL: url(['redis:', 'rediss:']).optional(),
  ITO_REDIS_CLUSTER: z
    .enum(['0', '1', 'false', 'true'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  ITO_QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,40}$/, 'expected a lowercase letter, then up to 40 of a-z 0-9 _')
    .default('ito'),
  ITO_PORT: port.default(8420),
  ITO_HOST: z.string().min(1).default('127.0.0.1'),
  ITO_API_URL: url(['http:', 'https:']).default('http://127.0.0.1:8420'),
  ITO_API_KEY: z.string().min(1).optional(),
  ITO_HEARTBEAT_INTERVAL_S: positiveNumber.default(2),
  ITO_HEARTBEAT_MISSES: z.coerce.number().int().min(1).max(100).default(3),
  /** A task is hung after this many of its expected step times without progress while its node still beats. */
  ITO_HANG_STEP_FACTOR: positiveNumber.default(5),
  /** The longest start-up allowance (seconds): a task that reports no step within its allowance is hung. 300 s keeps such a hang well inside the seed's 10-minute detection bound. */
  ITO_FIRST_STEP_MAX_S: positiveNumber.max(86_400, 'expected at most 86400 (a day)').default(300),
  /** SLO targets (seconds): a failure detected within this of its last evidence, training resumed within this of detection. */
  ITO_SLO_DETECTION_TARGET_S: positiveNumber.max(600, "expected at most 600 (the seed's 10-minute detection bound)").default(10),
  ITO_SLO_RESUME_TARGET_S: positiveNumber.max(900, "expected at most 900 (the seed's 15-minute resume bound)").default(60),
  /** Seconds a worker's claim on a job lasts without renewal: a job whose worker died runs again within about twice this. */
  ITO_JOB_LOCK_S: positiveNumber.min(1, 'expected at least 1').max(600, 'expected at most 600').default(30),
  ITO_TIME_SCALE: positiveNumber.default(1),
  ITO_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ITO_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(5_000),
  ITO_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).max(3_600_000).default(30_000),
  ITO_NODE_CREDENTIAL: z.string().min(1).optional(),
  ITO_SIM_FAULTS: z.string().optional(),
  /** A path, never the key: the server reads the Ed25519 private key (PEM) from this file. */
  ITO_AUDIT_SIGNING_KEY_FILE: z.string().regex(/^\//, 'expected an absolute path').max(4096).optional(),
  ITO_AUDIT_DIGEST_INTERVAL_S: z.coerce.number().int().min(1).max(86_400).default(300),
  ITO_EVAL_BATTERY_DIR: z.string().min(1).refine((v) => v.startsWith('/'), 'expected an absolute directory').optional(),
  /** Where the server keeps the operator's data (registered eval batteries): a storage prefix the server and its workers share. */
  ITO_OPERATOR_STORAGE: z
    .string()
    .max(1024)
    .regex(/^(file:\/\/\/|s3:\/\/[a-z0-9][a-z0-9.-]{1,62}\/)[^\s%]*$/, 'expected a file:///absolute/path or s3://bucket/prefix storage prefix')
    .optional(),
  /** An S3-compatible store: set the region or the endpoint and the server serves `s3://` storage through it. */
  ITO_S3_REGION: z.string().regex(/^[a-z0-9-]{1,32}$/, 'expected a region name such as us-east-1').optional(),
  ITO_S3_ENDPOINT: url(['http:', 'https:']).optional(),
  ITO_S3_PATH_STYLE: z
    .enum(['0', '1', 'false', 'true'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /** Credentials from the environment only (unset: the AWS SDK's own chain, e.g. an instance role); never from a manifest. */
  ITO_S3_ACCESS_KEY_ID: z.string().min(1).max(256).optional(),
  ITO_S3_SECRET_ACCESS_KEY: z.string().min(1).max(512).optional(),
  ITO_S3_SESSION_TOKEN: z.string().min(1).max(8192).optional(),
  ITO_S3_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  ITO_S3_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  ITO_STORAGE_PROBE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Demo and tests: schemes accepted with no driver because the simulated executor writes nothing there. */
  ITO_STORAGE_SIMULATED_SCHEMES: z
    .string()
    .regex(/^[a-z][a-z0-9+.-]{0,31}(,[a-z][a-z0-9+.-]{0,31})*$/, 'expected comma-separated schemes such as s3,gs')
    .optional(),
  /** Bytes one data ref may make a worker read during data prep; unset: the dataprep default (64 GiB). */
  ITO_DATAPREP_MAX_BYTES_PER_REF: z.coerce.number().int('expected a whole number of bytes').min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});

export type RawEnv = z.output<typeof envSchema>;

export interface ItoConfig extends RawEnv {
  ITO_HOME: string;
  ITO_TOKEN_FILE: string;
  ITO_EVAL_BATTERY_DIR: string;
  ITO_OPERATOR_STORAGE: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`invalid environment: ${variable}: ${reason}`);
  }
}

/** Parses the environment; throws a ConfigError naming the first bad variable. Empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ItoConfig {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') relevant[key] = value;
  }
  const parsed = envSchema.safeParse(relevant);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  if ((parsed.data.ITO_S3_ACCESS_KEY_ID === undefined) !== (parsed.data.ITO_S3_SECRET_ACCESS_KEY === undefined)) {
    throw new ConfigError('ITO_S3_SECRET_ACCESS_KEY', 'ITO_S3_ACCESS_KEY_ID and ITO_S3_SECRET_ACCESS_KEY are set together or not at all');
  }
  const home = parsed.data.ITO_HOME ?? join(homedir(), '.ito');
  return {
    ...parsed.data,
    ITO_HOME: home,
    // The client's own 0700 directory, apart from the embedded database's: run as root, ito-server opens
    // $ITO_HOME to the database's system user (o+x), which a credential directory must never be.
    ITO_TOKEN_FILE: parsed.data.ITO_TOKEN_FILE ?? join(home, 'cli', 'credentials.json'),
    ITO_EVAL_BATTERY_DIR: parsed.data.ITO_EVAL_BATTERY_DIR ?? join(home, 'evals'),
    ITO_OPERATOR_STORAGE: parsed.data.ITO_OPERATOR_STORAGE ?? `file://${resolve(home, 'operator')}`,
  };
}

/** For process entry points: load, or print the one line and exit 2. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): ItoConfig {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
