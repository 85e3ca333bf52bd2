import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import { buildApp } from '@ito/api';
import { createAdminService, createApiLedger, type AdminService } from '@ito/runs';
import { createLogger } from '@ito/config';
import { manifestDigest } from '@ito/contracts';
import { createEvalBatteryRegistry } from '@ito/evals';
import { createLedger } from '@ito/ledger';
import { defaultStorageRegistry } from '@ito/storage';
import { h200Booking } from '../fixtures/bookings.js';
import { freshDatabase } from './db.js';

export const EXAMPLE_MANIFEST = readFileSync(new URL('../../examples/manifest.json', import.meta.url), 'utf8');
/** The eval battery the server ships and registers at start (apps/server/src/shipped-batteries.ts); the examples name it. */
export const SHIPPED_BATTERY = { name: 'ito-evals/v1', bytes: readFileSync(new URL('../../apps/server/batteries/ito-evals/v1.jsonl', import.meta.url)) };

export interface CallResult {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * A real API server on a fresh database, listening on a loopback port, with a controllable clock offset and
 * the log lines it wrote (to check that no secret reaches a log).
 */
export async function startApi(
  opts: {
    rateLimit?: { max: number; timeWindowMs: number };
    authFailureLimit?: { max: number; timeWindowMs: number };
    agent?: { heartbeatIntervalS: number; heartbeatMisses: number };
    deskAdmission?: { concurrency: number; queue: number };
    checkpointStorage?: (prefix: string) => Promise<void>;
    replayAdmission?: { concurrency: number; queue: number };
    metricsAdmission?: { concurrency: number; queue: number };
    heartbeatAdmission?: { inFlight: number };
    /** Another API's database (its `databaseUrl`): a second process of the same deployment. Not dropped here. */
    databaseUrl?: string;
  } = {},
) {
  const db = opts.databaseUrl ? { url: opts.databaseUrl, drop: async () => undefined } : await freshDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 30 });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  const clock = { offsetMs: 0 };
  const now = () => new Date(Date.now() + clock.offsetMs);
  const ledger = createApiLedger(pool);
  // Every answer the tests provoke is checked against the OpenAPI document; close() fails the file on a gap.
  const undocumented: string[] = [];
  const app = await buildApp({
    logger,
    readiness: [],
    pool,
    ledger,
    now,
    ...(opts.rateLimit ? { rateLimit: opts.rateLimit } : {}),
    ...(opts.authFailureLimit ? { authFailureLimit: opts.authFailureLimit } : {}),
    ...(opts.agent ? { agent: opts.agent } : {}),
    ...(opts.deskAdmission ? { deskAdmission: opts.deskAdmission } : {}),
    ...(opts.checkpointStorage ? { checkpointStorage: opts.checkpointStorage } : {}),
    ...(opts.replayAdmission ? { replayAdmission: opts.replayAdmission } : {}),
    ...(opts.metricsAdmission ? { metricsAdmission: opts.metricsAdmission } : {}),
    ...(opts.heartbeatAdmission ? { heartbeatAdmission: opts.heartbeatAdmission } : {}),
    onUndocumentedAnswer: (violation) => undocumented.push(violation),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const admin: AdminService = createAdminService({ pool, ledger, now });
  // As the server does at start: the shipped battery is registered, its items in this API's own operator storage.
  const operatorDir = mkdtempSync(join(tmpdir(), 'ito-operator-'));
  const operatorStorage = `file://${operatorDir}`;
  const batteries = createEvalBatteryRegistry({ pool, ledger: createLedger({ pool }), storage: defaultStorageRegistry(), operatorStorage });
  await batteries.register(SHIPPED_BATTERY.name, SHIPPED_BATTERY.bytes, { ifAbsent: true });

  async function call(method: string, path: string, o: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${url}${path}`, { method, headers, ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}) });
    const text = await r.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: r.status, body, headers: r.headers };
  }

  return {
    url,
    /** The test's own database, for a second session (e.g. one that holds a lock). */
    databaseUrl: db.url,
    pool,
    ledger,
    admin,
    /** The eval battery registry, over this API's database and its operator storage (`operatorStorage`). */
    batteries,
    operatorStorage,
    clock,
    logLines,
    call,
    /** Answers whose status or error code the OpenAPI document does not list for their route. */
    undocumented,
    async close() {
      await app.close();
      await pool.end();
      await db.drop();
      rmSync(operatorDir, { recursive: true, force: true });
      if (undocumented.length > 0) throw new Error(`answers the OpenAPI document does not list:\n${[...new Set(undocumented)].join('\n')}`);
    },
  };
}

export type Api = Awaited<ReturnType<typeof startApi>>;

/** A tenant with its two keys and a completed 2×8 H200 booking on InfiniBand for the next 30 days. */
export async function seedTenant(api: Api, overrides: Record<string, unknown> = {}) {
  const tenant = await api.admin.createTenant({ name: 'acme', requesterPrincipal: 'ml-team@acme', approverPrincipal: 'finance@acme' });
  const booking = await api.admin.createBooking(h200Booking(tenant.tenant_id, overrides));
  return { tenant, booking, requester: tenant.requester_key, approver: tenant.approver_key, bookingId: booking.booking_id };
}

export type Seed = Awaited<ReturnType<typeof seedTenant>>;

/** Requests (and, unless told otherwise, approves) a train.create confirmation for the manifest. */
export async function trainConfirmation(api: Api, seed: Seed, manifest = EXAMPLE_MANIFEST, opts: { approve?: boolean } = {}) {
  const r = await api.call('POST', '/v1/confirmations', {
    key: seed.requester,
    body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: manifestDigest(manifest) },
  });
  if (r.status !== 201) throw new Error(`confirmation request failed: ${JSON.stringify(r.body)}`);
  const ref = r.body.data.confirmation_ref as string;
  if (opts.approve !== false) {
    const a = await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: seed.approver });
    if (a.status !== 200) throw new Error(`approve failed: ${JSON.stringify(a.body)}`);
  }
  return ref;
}

export function trainBody(seed: Seed, ref: string, manifest = EXAMPLE_MANIFEST) {
  return { booking_id: seed.bookingId, manifest, manifest_digest: manifestDigest(manifest), confirmation_ref: ref };
}

/**
 * What a refused call must not leave behind: runs, events, confirmations (requested or consumed), idempotency
 * records, stored manifest bodies.
 */
export async function footprint(api: Api) {
  const q = async (sql: string) => Number((await api.pool.query<{ n: string }>(sql)).rows[0]!.n);
  return {
    runs: await q('select count(*) as n from runs'),
    tasks: await q('select count(*) as n from tasks'),
    events: await q('select count(*) as n from events'),
    confirmations: await q('select count(*) as n from confirmations'),
    consumed: await q(`select count(*) as n from confirmations where status = 'consumed'`),
    idempotency: await q('select count(*) as n from idempotency_keys'),
    manifests: await q('select count(*) as n from manifests'),
  };
}

/** Every 6-character slice of a planted string: none may appear in an answer, a `details` field or a log line. */
export function slicesOf(planted: string): string[] {
  return Array.from({ length: Math.max(0, planted.length - 5) }, (_, i) => planted.slice(i, i + 6));
}

/** The slices of `planted` found in any of the texts (empty when nothing leaked). */
export function leaked(planted: string, texts: readonly string[]): string[] {
  const all = texts.join('\n');
  return slicesOf(planted).filter((s) => all.includes(s));
}
