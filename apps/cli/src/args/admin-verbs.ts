import { EXAMPLE_IDS as ids, type VerbSpec } from './verbs.js';

/** The verb table of `ito-admin`: it acts on the ledger database directly, never over the network. */
const admin = { auth: 'none', network: 'none', authority: 'none', availability: 'available' } as const;

export const ADMIN_VERBS: VerbSpec[] = [
  {
    name: 'tenant create',
    summary: 'create a tenant with a requester key and an approver key (shown once)',
    usage: 'ito-admin tenant create --name <name> --requester-principal <who> --approver-principal <who> [--json]',
    example: 'ito-admin tenant create --name acme --requester-principal ml-team@acme --approver-principal finance@acme --json',
    flags: [
      { name: 'name', value: 'name', required: true, help: 'tenant name' },
      { name: 'requester-principal', value: 'who', required: true, help: 'who holds the requester key; a confirmation is never decided by its requesting principal' },
      { name: 'approver-principal', value: 'who', required: true, help: 'who holds the approver key (must differ from the requester principal)' },
    ],
    side_effect: 'credential_store',
    ...admin,
  },
  {
    name: 'tenant policy',
    summary: 'show or set what a tenant allows its runs: file roots, checkpoint storage, licences, contamination limit',
    usage:
      'ito-admin tenant policy show --tenant <id> [--json] | ito-admin tenant policy set --tenant <id> [--file-roots </a,/b>] [--storage-schemes <s3,file>] [--storage-prefixes <a,b>] [--licenses <a,b>] [--max-contaminated-fraction <x>] [--json]',
    example: `ito-admin tenant policy set --tenant ${ids.tenant} --file-roots /srv/ito/acme --storage-schemes s3,file --json`,
    positionals: [{ name: 'show|set', required: true, help: 'show prints the policy; set replaces the fields given and records TenantPolicyChanged' }],
    flags: [
      { name: 'tenant', value: 'id', required: true, help: 'tenant id' },
      { name: 'file-roots', value: '/a,/b', help: 'absolute normalised directories the tenant\'s file:// data refs and checkpoint storage may name ("" for none)' },
      { name: 'storage-schemes', value: 'a,b', help: 'checkpoint storage schemes allowed, e.g. s3,file' },
      { name: 'storage-prefixes', value: 'a,b', help: 'checkpoint storage prefixes allowed ("" for any of an allowed scheme)' },
      { name: 'licenses', value: 'a,b', help: 'data licences allowed' },
      { name: 'max-contaminated-fraction', value: 'x', help: 'largest contaminated fraction a data source may declare, 0 to 1' },
    ],
    side_effect: 'none',
    ...admin,
  },
  {
    name: 'key create',
    summary: 'create an API key for a tenant (shown once)',
    usage: 'ito-admin key create --tenant <id> --scopes <a,b> [--principal <who>] [--json]',
    example: `ito-admin key create --tenant ${ids.tenant} --scopes runs:read,audit:read --principal auditor@acme --json`,
    flags: [
      { name: 'tenant', value: 'id', required: true, help: 'tenant id' },
      { name: 'scopes', value: 'a,b', required: true, help: 'comma-separated scopes: runs:read, runs:write, confirmations:approve, desk:read, audit:read, admin' },
      { name: 'principal', value: 'who', help: 'who holds the key (a person or team name); required with runs:write, confirmations:approve or admin; that principal can never decide its own confirmations' },
    ],
    side_effect: 'credential_store',
    ...admin,
  },
  {
    name: 'operator-key create',
    summary: "create an operator credential: the pricing desk's fleet-wide figures (shown once); no tenant can make one",
    usage: 'ito-admin operator-key create --principal <who> [--json]',
    example: 'ito-admin operator-key create --principal pricing-desk@ito --json',
    flags: [{ name: 'principal', value: 'who', required: true, help: 'who holds the credential (a person or team name)' }],
    side_effect: 'credential_store',
    ...admin,
  },
  { name: 'key revoke', summary: 'revoke an API key by its id', usage: 'ito-admin key revoke <key-id>', example: `ito-admin key revoke ${ids.key}`, positionals: [{ name: 'key-id', required: true, help: 'key id (not the key itself)' }], side_effect: 'credential_revoke', ...admin },
  {
    name: 'booking create',
    summary: 'record a booking fed by the desk',
    usage: 'ito-admin booking create --tenant <id> --gpu h200 --nodes 2 --gpus-per-node 8 --region us-east-1 --fabric infiniband --term-start <iso> --term-end <iso> --rate-usd-per-gpu-hour 2.5 [--status completed] [--json]',
    example: `ito-admin booking create --tenant ${ids.tenant} --gpu h200 --nodes 2 --gpus-per-node 8 --region us-east-1 --fabric infiniband --term-start 2026-01-01T00:00:00Z --term-end 2026-02-01T00:00:00Z --rate-usd-per-gpu-hour 2.5 --json`,
    flags: [
      { name: 'tenant', value: 'id', required: true, help: 'tenant id' },
      { name: 'gpu', value: 'type', required: true, help: 'GPU type, e.g. h200' },
      { name: 'nodes', value: 'n', required: true, help: 'node count' },
      { name: 'gpus-per-node', value: 'n', required: true, help: 'GPUs per node' },
      { name: 'region', value: 'region', required: true, help: 'region' },
      { name: 'fabric', value: 'fabric', required: true, help: 'interconnect, e.g. infiniband' },
      { name: 'term-start', value: 'iso', required: true, help: 'start of the term' },
      { name: 'term-end', value: 'iso', required: true, help: 'end of the term' },
      { name: 'rate-usd-per-gpu-hour', value: 'usd', required: true, help: 'price per GPU-hour' },
      { name: 'status', value: 'status', help: 'initial status (default completed)' },
    ],
    side_effect: 'none',
    ...admin,
  },
  { name: 'booking expire', summary: 'mark a booking expired', usage: 'ito-admin booking expire <id>', example: `ito-admin booking expire ${ids.booking}`, positionals: [{ name: 'id', required: true, help: 'booking id' }], side_effect: 'none', ...admin },
  { name: 'booking revoke', summary: 'revoke a booking', usage: 'ito-admin booking revoke <id>', example: `ito-admin booking revoke ${ids.booking}`, positionals: [{ name: 'id', required: true, help: 'booking id' }], side_effect: 'none', ...admin },
  { name: 'booking release', summary: 'release a booking', usage: 'ito-admin booking release <id>', example: `ito-admin booking release ${ids.booking}`, positionals: [{ name: 'id', required: true, help: 'booking id' }], side_effect: 'none', ...admin },
  {
    name: 'battery add',
    summary: 'register an eval battery: its items stored by sha256 in the operator storage, EvalBatteryRegistered recorded',
    usage: 'ito-admin battery add <name> --file <items.jsonl> [--json]',
    example: 'ito-admin battery add acme-evals/v2 --file /srv/ito/evals/acme-evals-v2.jsonl --json',
    positionals: [{ name: 'name', required: true, help: 'the name and version manifests give as eval.battery, e.g. acme-evals/v2; registered once, never replaced' }],
    flags: [{ name: 'file', value: 'items.jsonl', required: true, help: 'JSON lines of {"id", "task", "text"}, at most 64 MiB and 100000 items' }],
    side_effect: 'none',
    ...admin,
  },
  { name: 'battery list', summary: 'list the registered eval batteries (name, items, sha256)', usage: 'ito-admin battery list [--json]', example: 'ito-admin battery list --json', side_effect: 'none', ...admin },
  { name: 'node register', summary: 'register a GPU node of a booking; prints its agent credential once', usage: 'ito-admin node register --booking <id> --name <name> [--json]', example: `ito-admin node register --booking ${ids.booking} --name gpu-01 --json`, flags: [{ name: 'booking', value: 'id', required: true, help: 'booking id' }, { name: 'name', value: 'name', required: true, help: 'node name' }], side_effect: 'credential_store', ...admin },
  { name: 'node revoke', summary: "revoke a node's agent credential: its next heartbeat or report is refused", usage: 'ito-admin node revoke <node-id>', example: `ito-admin node revoke ${ids.node}`, positionals: [{ name: 'node-id', required: true, help: 'node id (not its credential)' }], side_effect: 'credential_revoke', ...admin },
];

export const ADMIN_GROUPS: Record<string, string | null> = { tenant: null, key: null, 'operator-key': null, booking: null, battery: null, node: null };
