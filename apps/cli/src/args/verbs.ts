/**
 * The verb table of `ito`: names, flags, help text and the honest capability facts ECC reads. Pure data with no
 * imports, so `ito --help` can load it without the HTTP client or any schema.
 */
export interface FlagSpec {
  name: string;
  /** Placeholder of the value; absent for a boolean switch. */
  value?: string;
  required?: boolean;
  help: string;
}

export interface PositionalSpec {
  name: string;
  required: boolean;
  help: string;
}

export type Auth = 'none' | 'credential' | 'requester' | 'approver' | 'desk' | 'auditor';
export type SideEffect =
  | 'none'
  | 'credential_store'
  | 'credential_revoke'
  | 'confirmation_request'
  | 'confirmation_decision'
  | 'workload_start'
  | 'workload_cancel'
  | 'workload_cleanup'
  | 'workload_restart'
  | 'file_write';
export type Authority = 'none' | 'identity' | 'approver' | 'entitled_workload' | 'confirmed_run_action';

export interface VerbSpec {
  name: string;
  summary: string;
  usage: string;
  example: string;
  positionals?: PositionalSpec[];
  flags?: FlagSpec[];
  auth: Auth;
  network: 'none' | 'api';
  side_effect: SideEffect;
  authority: Authority;
  /** `preview`: wired to a route the server may not offer yet; a missing route answers not_found. */
  availability: 'available' | 'preview';
  /** The confirmation action this verb consumes, so a missing reference can say how to ask for one. */
  confirmationAction?: string;
}

/**
 * Ids in examples have the exact form the server issues (`<prefix>_` and 32 hex digits, packages/runs/src/ids.ts), so
 * an example never teaches a shape the server would not recognise.
 */
export const EXAMPLE_IDS = {
  tenant: 'ten_cdca71238e25fcc1007140294d84fb15',
  key: 'key_70426985b543f395501efb72f3d8822a',
  booking: 'bkg_7520d912def6ea819b7280da6d7dde3f',
  node: 'node_3f9c2a61d04e8b7715ac90e2d6b4f183',
  run: 'run_8083cb4870e7623024b93b6cab81fbad',
  trainRef: 'cfm_1667689399fbffd3c24b91da03db92b7',
  cancelRef: 'cfm_ea49aca101c22c71328cc9f995e3ee2c',
  cleanupRef: 'cfm_6275cadb3a20220ce73ea1a8f01b188b',
  restartRef: 'cfm_d130bd335c7e9f9f78f7960ab4beddb8',
} as const;
const ids = EXAMPLE_IDS;

export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: 'json', help: 'print exactly one JSON envelope on stdout (accepted before or after the verb)' },
  { name: 'connect-timeout', value: 'ms', help: 'connection deadline (default ITO_CONNECT_TIMEOUT_MS or 5000)' },
  { name: 'timeout', value: 'ms', help: 'overall deadline per request (default ITO_REQUEST_TIMEOUT_MS or 30000)' },
  { name: 'help', help: 'show help for the verb' },
];

/** Flags that would put a secret into argv (visible in `ps`, shell history and CI logs): always a usage error. */
export const SECRET_FLAGS = ['api-key', 'key', 'token', 'password', 'secret', 'credential'];

const manifestFlag: FlagSpec = { name: 'manifest', value: 'abs-path', required: true, help: 'absolute path of the manifest file (read safely, sent byte for byte)' };
const bookingFlag: FlagSpec = { name: 'booking', value: 'id', required: true, help: 'booking id' };
const refFlag: FlagSpec = { name: 'confirmation-ref', value: 'ref', required: true, help: 'an approved confirmation reference' };
const keyFlag: FlagSpec = { name: 'idempotency-key', value: 'key', required: true, help: 'your unique key for this mutation; repeat it to retry safely' };
const runArg: PositionalSpec = { name: 'run-id', required: true, help: 'run id' };
const read = { network: 'api', side_effect: 'none', authority: 'none', availability: 'available' } as const;

export const VERBS: VerbSpec[] = [
  { name: 'capabilities', summary: 'describe every verb and the output contract (no credential, no network)', usage: 'ito capabilities --json', example: 'ito capabilities --json', auth: 'none', network: 'none', side_effect: 'none', authority: 'none', availability: 'available' },
  { name: 'login', summary: 'store an API key read from stdin or a prompt, after verifying it', usage: 'ito login [--no-browser]', example: 'printf %s "$KEY" | ito login --json', flags: [{ name: 'no-browser', help: 'accepted for compatibility; the key is always read from stdin or a hidden prompt' }], auth: 'none', network: 'api', side_effect: 'credential_store', authority: 'identity', availability: 'available' },
  { name: 'logout', summary: 'revoke the stored key on the server, then delete the local file', usage: 'ito logout', example: 'ito logout', auth: 'credential', network: 'api', side_effect: 'credential_revoke', authority: 'identity', availability: 'available' },
  { name: 'auth', summary: 'check the current credential (never starts a login)', usage: 'ito auth', example: 'ito auth --json', auth: 'credential', ...read },
  { name: 'bookings list', summary: 'list your bookings', usage: 'ito bookings [list]', example: 'ito bookings', auth: 'requester', ...read },
  { name: 'bookings show', summary: 'show one booking', usage: 'ito bookings show <id>', example: `ito bookings show ${ids.booking}`, positionals: [{ name: 'id', required: true, help: 'booking id' }], auth: 'requester', ...read },
  { name: 'eligibility', summary: 'fresh training eligibility for a booking, with the bound fields', usage: 'ito eligibility --booking <id>', example: `ito eligibility --booking ${ids.booking}`, flags: [bookingFlag], auth: 'requester', ...read },
  { name: 'plan', summary: 'parallelism, precision and cost for a manifest; creates nothing', usage: 'ito plan --booking <id> --manifest <abs-path>', example: `ito plan --booking ${ids.booking} --manifest /home/me/run/manifest.json`, flags: [bookingFlag, manifestFlag], auth: 'requester', ...read },
  {
    name: 'confirm request',
    summary: 'ask an approver to confirm an action; prints the opaque reference',
    usage: 'ito confirm request --action train.create --booking <id> --manifest <abs-path>\n       ito confirm request --action run.cancel|run.cleanup|run.restart|booking.release --run <id>',
    example: `ito confirm request --action train.create --booking ${ids.booking} --manifest /home/me/run/manifest.json`,
    flags: [
      { name: 'action', value: 'action', required: true, help: 'train.create, run.cancel, run.cleanup, run.restart or booking.release' },
      { name: 'booking', value: 'id', help: 'booking id (train.create)' },
      { name: 'manifest', value: 'abs-path', help: 'manifest file (train.create)' },
      { name: 'run', value: 'id', help: 'run id (run actions, booking.release); the run names its booking' },
    ],
    auth: 'requester', network: 'api', side_effect: 'confirmation_request', authority: 'identity', availability: 'available',
  },
  { name: 'confirm approve', summary: 'approve a pending confirmation (approver credential)', usage: 'ito confirm approve <ref>', example: `ito confirm approve ${ids.trainRef}`, positionals: [{ name: 'ref', required: true, help: 'confirmation reference' }], auth: 'approver', network: 'api', side_effect: 'confirmation_decision', authority: 'approver', availability: 'available' },
  { name: 'confirm deny', summary: 'deny a pending confirmation (approver credential)', usage: 'ito confirm deny <ref>', example: `ito confirm deny ${ids.trainRef}`, positionals: [{ name: 'ref', required: true, help: 'confirmation reference' }], auth: 'approver', network: 'api', side_effect: 'confirmation_decision', authority: 'approver', availability: 'available' },
  { name: 'confirm show', summary: 'show a confirmation and its status', usage: 'ito confirm show <ref>', example: `ito confirm show ${ids.trainRef}`, positionals: [{ name: 'ref', required: true, help: 'confirmation reference' }], auth: 'requester', ...read },
  {
    name: 'train',
    summary: 'start a run on a booking with an approved confirmation (safe to retry with the same key)',
    usage: 'ito train --booking <id> --manifest <abs-path> --confirmation-ref <ref> --idempotency-key <key> [--json]',
    example: `ito train --booking ${ids.booking} --manifest /home/me/run/manifest.json --confirmation-ref ${ids.trainRef} --idempotency-key run-2026-01-a --json`,
    flags: [bookingFlag, manifestFlag, refFlag, keyFlag],
    auth: 'requester', network: 'api', side_effect: 'workload_start', authority: 'entitled_workload', availability: 'available',
  },
  {
    name: 'status',
    summary: 'state of a run, by id or by the idempotency key it was created with',
    usage: 'ito status [<run-id> | --idempotency-key <key>] [--watch]',
    example: `ito status ${ids.run} --watch`,
    positionals: [{ name: 'run-id', required: false, help: 'run id' }],
    flags: [
      { name: 'idempotency-key', value: 'key', help: 'find the run created with this key' },
      { name: 'watch', help: 'follow the run until it ends; progress on stderr' },
      { name: 'interval', value: 'ms', help: 'polling interval for --watch (default 2000)' },
    ],
    auth: 'requester', ...read,
  },
  { name: 'logs', summary: 'log lines of a run', usage: 'ito logs <run-id> [--follow]', example: `ito logs ${ids.run} --follow`, positionals: [runArg], flags: [{ name: 'follow', help: 'keep printing new lines until the run ends' }, { name: 'interval', value: 'ms', help: 'polling interval for --follow (default 2000)' }], auth: 'requester', ...read },
  { name: 'metrics', summary: 'training metrics of a run', usage: 'ito metrics <run-id>', example: `ito metrics ${ids.run}`, positionals: [runArg], auth: 'requester', ...read },
  { name: 'checkpoints', summary: 'checkpoints saved by a run', usage: 'ito checkpoints <run-id>', example: `ito checkpoints ${ids.run}`, positionals: [runArg], auth: 'requester', ...read },
  { name: 'events', summary: 'the ledger events of a run', usage: 'ito events <run-id>', example: `ito events ${ids.run} --json`, positionals: [runArg], auth: 'requester', ...read },
  { name: 'cancel', summary: 'cancel a run (needs a run.cancel confirmation)', usage: 'ito cancel <run-id> --confirmation-ref <ref> --idempotency-key <key>', example: `ito cancel ${ids.run} --confirmation-ref ${ids.cancelRef} --idempotency-key cancel-1`, positionals: [runArg], flags: [refFlag, keyFlag], auth: 'requester', network: 'api', side_effect: 'workload_cancel', authority: 'confirmed_run_action', availability: 'available', confirmationAction: 'run.cancel' },
  { name: 'cleanup', summary: 'clean up a finished run; the booking is released only with --release-booking and its own confirmation', usage: 'ito cleanup <run-id> --confirmation-ref <ref> --idempotency-key <key> [--release-booking --release-confirmation-ref <ref>]', example: `ito cleanup ${ids.run} --confirmation-ref ${ids.cleanupRef} --idempotency-key cleanup-1`, positionals: [runArg], flags: [refFlag, keyFlag, { name: 'release-booking', help: 'also release the booking (needs --release-confirmation-ref)' }, { name: 'release-confirmation-ref', value: 'ref', help: 'an approved booking.release confirmation for the run, separate from the run.cleanup one' }], auth: 'requester', network: 'api', side_effect: 'workload_cleanup', authority: 'confirmed_run_action', availability: 'available', confirmationAction: 'run.cleanup' },
  { name: 'restart', summary: 'human-gated restart after a loss spike (needs a run.restart confirmation)', usage: 'ito restart <run-id> --confirmation-ref <ref> --idempotency-key <key>', example: `ito restart ${ids.run} --confirmation-ref ${ids.restartRef} --idempotency-key restart-1`, positionals: [runArg], flags: [refFlag, keyFlag], auth: 'requester', network: 'api', side_effect: 'workload_restart', authority: 'confirmed_run_action', availability: 'available', confirmationAction: 'run.restart' },
  { name: 'desk telemetry', summary: 'goodput, badput by cause, interruption rate, checkpoint bandwidth and the price of a productive GPU-hour (desk credential)', usage: 'ito desk telemetry [--group-by region,fabric,gpu] [--since <iso>] [--until <iso>]', example: 'ito desk telemetry --group-by region,gpu --since 2026-01-01T00:00:00Z', flags: [{ name: 'group-by', value: 'fields', help: 'comma-separated: run, booking, region, fabric, gpu (default region,fabric,gpu)' }, { name: 'since', value: 'iso', help: 'start of the window (default 30 days before --until)' }, { name: 'until', value: 'iso', help: 'end of the window (default now)' }], auth: 'desk', ...read, availability: 'available' },
  { name: 'audit verify', summary: "recompute the tenant's hash chain and check it reaches the server's signed digest, or verify an export file offline (auditor credential)", usage: 'ito audit verify [--export <file>] [--public-key <file>] [--since-digest]', example: 'ito audit verify --export /tmp/ledger-export.jsonl --public-key /etc/ito/audit-signing.pub --json', flags: [{ name: 'export', value: 'file', help: 'verify this export file with no server and no database' }, { name: 'public-key', value: 'file', help: "the operator's Ed25519 public key (PEM) to check the signed digest with" }, { name: 'since-digest', help: "check only the links after the tenant's leaf under the last signed digest (its path to the signed root, and with --public-key its signature, are checked; the links before it are not walked again)" }], auth: 'auditor', ...read, availability: 'available' },
  { name: 'audit export', summary: "write the tenant's events and chain links, its head and the signed digest anchoring it, to a new file", usage: 'ito audit export --out <file>', example: 'ito audit export --out /tmp/ledger-export.jsonl', flags: [{ name: 'out', value: 'file', required: true, help: 'file to create (never overwritten)' }], auth: 'auditor', network: 'api', side_effect: 'file_write', authority: 'none', availability: 'available' },
  { name: 'audit replay', summary: 'rebuild every projection from the ledger and report each difference from the live state by run and field; or show runs as of a point', usage: 'ito audit replay [--as-of <position|time>] [--run <run-id>]', example: 'ito audit replay --as-of 1200 --run ' + EXAMPLE_IDS.run, flags: [{ name: 'as-of', value: 'position|time', help: 'a ledger position or an ISO 8601 instant' }, { name: 'run', value: 'run-id', help: 'with --as-of: this run in full, with its tasks' }], auth: 'auditor', ...read, availability: 'available' },
];

/** Verbs with subcommands and the default used when the subcommand is left out. */
export const GROUPS: Record<string, string | null> = { bookings: 'list', confirm: null, desk: null, audit: null };
