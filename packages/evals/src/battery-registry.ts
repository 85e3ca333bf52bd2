import { ItoError } from '@ito/contracts';
import { EVAL_BATTERY_REGISTERED, EVAL_BATTERY_TENANT_ID, evalBatteryObjectUri, evalBatteryStreamId, type EvalBatteryRegisteredEvent } from '@ito/domain';
import { VersionConflictError, type Ledger } from '@ito/ledger';
import type { StorageRegistry } from '@ito/storage';
import { checkBatteryFile } from './battery-file.js';
import { lookupEvalBattery, type RegisteredBattery } from './battery-lookup.js';

/** The queries the registry runs outside the ledger (the list of every registration). */
export interface Queryable {
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

export interface EvalBatteryRegistryDeps {
  pool: Queryable;
  ledger: Ledger;
  storage: StorageRegistry;
  /** Where the operator's data is kept (ITO_OPERATOR_STORAGE): `file:///…` or `s3://bucket/prefix`. */
  operatorStorage: string;
}

/** Registrations listed at most; a registry this large is not one an operator reads on a terminal. */
const MAX_LISTED = 10_000;

/**
 * Registers eval batteries (`ito-admin battery add`, and the batteries the server ships) and finds them again.
 * A registration stores the items first, by digest, then records `EvalBatteryRegistered` on the name's own
 * stream; when the record cannot be made (the name was taken meanwhile, the database failed), an object this
 * registration wrote is removed again, so a refusal leaves neither an event nor an object behind.
 */
export function createEvalBatteryRegistry(deps: EvalBatteryRegistryDeps) {
  const uriOf = (sha256: string) => evalBatteryObjectUri(deps.operatorStorage, sha256);

  const lookup = (name: string): Promise<RegisteredBattery | null> => lookupEvalBattery(deps.ledger, name);

  /** Whether any registration names this digest (another name may share an object). */
  async function digestInUse(sha256: string): Promise<boolean> {
    const { rows } = await deps.pool.query<{ n: number }>(
      `select count(*)::int as n from events where tenant_id = $1 and type = $2 and data->>'sha256' = $3`,
      [EVAL_BATTERY_TENANT_ID, EVAL_BATTERY_REGISTERED, sha256],
    );
    return (rows[0]?.n ?? 0) > 0;
  }

  return {
    lookup,

    /**
     * Validates the items file, stores it at its digest and records the registration. A name already
     * registered is `eval_battery_exists` (never replaced: runs were checked against its digest), unless
     * `ifAbsent`, which answers the existing registration with `created: false`.
     */
    async register(name: string, bytes: Uint8Array, opts: { ifAbsent?: boolean; actor?: string } = {}) {
      const file = checkBatteryFile(name, bytes);
      const existing = await lookup(name);
      if (existing) {
        if (opts.ifAbsent) return { ...existing, created: false };
        throw new ItoError('eval_battery_exists', `an eval battery named ${name} is already registered; a registered battery never changes, so register the new items under a new version`);
      }
      const uri = uriOf(file.sha256);
      const driver = deps.storage.driverFor(uri);
      const had = await driver.exists(uri);
      // A stored object that no longer hashes to its name is replaced: the digest, not the place, is the truth.
      if (!had || !(await storedDigestIs(deps.storage, uri, file.sha256))) await driver.write(uri, bytes);
      const event: EvalBatteryRegisteredEvent = { name, sha256: file.sha256, items: file.items, bytes: file.bytes };
      try {
        const stored = await deps.ledger.transaction((tx) =>
          tx.append(evalBatteryStreamId(name), [{ type: EVAL_BATTERY_REGISTERED, data: { ...event }, ...(opts.actor ? { metadata: { actor: opts.actor } } : {}) }], {
            tenantId: EVAL_BATTERY_TENANT_ID,
            expectedVersion: 'no_stream',
          }),
        );
        return { ...event, registered_at: stored.events[0]!.recordedAt.toISOString(), created: true };
      } catch (err) {
        if (!had && !(await digestInUse(file.sha256).catch(() => true))) await driver.remove(uri).catch(() => undefined);
        if (err instanceof VersionConflictError) {
          const winner = await lookup(name);
          if (opts.ifAbsent && winner) return { ...winner, created: false };
          throw new ItoError('eval_battery_exists', `an eval battery named ${name} is already registered`);
        }
        throw err;
      }
    },

    /** Every registration, oldest first. */
    async list(): Promise<RegisteredBattery[]> {
      const { rows } = await deps.pool.query<{ data: EvalBatteryRegisteredEvent; recorded_at: Date }>(
        `select data, recorded_at from events where tenant_id = $1 and type = $2 order by position limit ${MAX_LISTED}`,
        [EVAL_BATTERY_TENANT_ID, EVAL_BATTERY_REGISTERED],
      );
      return rows.map((r) => ({ name: r.data.name, sha256: r.data.sha256, items: r.data.items, bytes: r.data.bytes, registered_at: new Date(r.recorded_at).toISOString() }));
    },

    uriOf,
  };
}

export type EvalBatteryRegistry = ReturnType<typeof createEvalBatteryRegistry>;

async function storedDigestIs(storage: StorageRegistry, uri: string, sha256: string): Promise<boolean> {
  try {
    const stream = await storage.driverFor(uri).readStream(uri);
    for await (const _ of stream) {
      // read to the end: the digest is computed as the bytes pass
    }
    return stream.sha256() === sha256;
  } catch {
    return false;
  }
}
