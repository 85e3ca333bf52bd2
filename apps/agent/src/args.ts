import { isAbsolute } from 'node:path';
import { EXECUTORS, rendezvousSchema, type ExecutorKind, type Rendezvous } from '@ito/contracts';

export interface AgentArgs {
  executor: ExecutorKind;
  trainerConfig: string | null;
  workDir: string | null;
  progressIntervalMs: number;
  /** GPUs the simulated executor reports in heartbeats. */
  gpus: number;
  /** The endpoint offered to a multi-node stage's ranks when this node is rank 0; null: none offered. */
  rendezvous: Rendezvous | null;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `usage: ito-agent --executor simulated|process [--trainer-config <abs-path>] [--work-dir <abs-path>]
                 [--progress-interval-ms <ms>] [--gpus <n>] [--rendezvous-addr <host> --rendezvous-port <port>]
  The node credential comes from ITO_NODE_CREDENTIAL (never a flag); the API from ITO_API_URL.
  process: runs the trainer commands of --trainer-config (JSON, the operator's; never a command from a manifest).
  simulated: models step times from the plan at ITO_TIME_SCALE, with faults from ITO_SIM_FAULTS.
  --rendezvous-addr/--rendezvous-port: where this node's trainer listens when it is rank 0 of a multi-node stage
  (MASTER_ADDR/MASTER_PORT for every rank); an address the other nodes reach and a port kept free for it.`;

/** Flags that would put a secret into argv (visible in `ps`): always a usage error. */
const SECRET_FLAGS = ['credential', 'node-credential', 'token', 'key', 'api-key', 'password', 'secret'];

/** Parses argv (without node and the script). Pure. */
export function parseAgentArgs(argv: string[]): AgentArgs | 'help' {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new UsageError(`unexpected argument ${JSON.stringify(arg.slice(0, 64))}`);
    const name = m[1]!;
    if (SECRET_FLAGS.includes(name)) throw new UsageError(`--${name} is refused: the node credential is read from ITO_NODE_CREDENTIAL only`);
    if (!['executor', 'trainer-config', 'work-dir', 'progress-interval-ms', 'gpus', 'rendezvous-addr', 'rendezvous-port'].includes(name)) throw new UsageError(`unknown flag --${name}`);
    if (values.has(name)) throw new UsageError(`--${name} may be given once`);
    const value = m[2] ?? argv[++i];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
    values.set(name, value);
  }
  const executor = values.get('executor');
  if (!executor || !(EXECUTORS as readonly string[]).includes(executor)) throw new UsageError(`--executor must be one of ${EXECUTORS.join(', ')}`);
  const path = (name: string) => {
    const v = values.get(name);
    if (v !== undefined && !isAbsolute(v)) throw new UsageError(`--${name} must be an absolute path`);
    return v ?? null;
  };
  const trainerConfig = path('trainer-config');
  if (executor === 'process' && !trainerConfig) throw new UsageError('--executor process needs --trainer-config <abs-path>');
  if (executor === 'simulated' && trainerConfig) throw new UsageError('--trainer-config is for --executor process');
  const int = (name: string, dflt: number, min: number, max: number) => {
    const raw = values.get(name);
    if (raw === undefined) return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  const addr = values.get('rendezvous-addr');
  const port = values.get('rendezvous-port');
  if ((addr === undefined) !== (port === undefined)) throw new UsageError('--rendezvous-addr and --rendezvous-port go together');
  let rendezvous: Rendezvous | null = null;
  if (addr !== undefined) {
    const parsed = rendezvousSchema.safeParse({ addr, port: /^\d{1,5}$/.test(port!) ? Number(port) : Number.NaN });
    if (!parsed.success) throw new UsageError('--rendezvous-addr must be an IPv4 address or a host name, and --rendezvous-port a port from 1024 to 65535');
    rendezvous = parsed.data;
  }
  return {
    executor: executor as ExecutorKind,
    trainerConfig,
    workDir: path('work-dir'),
    progressIntervalMs: int('progress-interval-ms', 1000, 10, 600_000),
    gpus: int('gpus', 8, 0, 64),
    rendezvous,
  };
}
