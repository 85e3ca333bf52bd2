import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeNodeCredential } from '@ito/runs';
import { seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';

/**
 * Two API processes of one deployment on one database, each caching the node credentials it verified: a
 * revocation committed through one is refused by the other within a second (pushed by NOTIFY), and one
 * committed while a process's LISTEN connection is down is not missed either.
 */
let first: Api;
let second: Api;
let seed: Seed;
beforeAll(async () => {
  first = await startApi();
  second = await startApi({ databaseUrl: first.databaseUrl });
  seed = await seedTenant(first);
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});

const beat = (api: Api, key: string) => api.call('POST', '/v1/agent/heartbeat', { key, body: { tasks: [], gpus: [{ index: 0, healthy: true }] } });

/** Polls until `check` holds or `ms` pass; answers whether it held (the deadline bounds the wait, it is not a timing assertion). */
async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The LISTEN connections for node credentials on this database: one per API process once it hears revocations. */
const listeners = async (api: Api) =>
  Number(
    (
      await api.pool.query<{ n: string }>(
        `select count(*) as n from pg_stat_activity where datname = current_database() and query = 'listen ito_node_credentials' and pid <> pg_backend_pid()`,
      )
    ).rows[0]!.n,
  );

/** Marks the credential revoked (or not) without announcing it: what a process that still caches it cannot see. */
const silently = (api: Api, nodeId: string, revoked: boolean) =>
  api.pool.query(`update nodes set revoked_at = ${revoked ? 'now()' : 'null'} where node_id = $1`, [nodeId]);

async function cachedNode(name: string) {
  const node = await first.admin.registerNode({ bookingId: seed.bookingId, name });
  expect((await beat(second, node.node_credential)).status).toBe(200);
  // The second process answers from its cache: a revocation nobody announced does not reach it.
  await silently(first, node.node_id, true);
  expect((await beat(second, node.node_credential)).status).toBe(200);
  expect((await beat(first, node.node_credential)).body.error.code).toBe('credential_revoked');
  await silently(first, node.node_id, false);
  return node;
}

describe('node credentials cached per API process', () => {
  it('a revocation committed through one process is refused by the other within a second', async () => {
    expect(await within(10_000, async () => (await listeners(first)) >= 2)).toBe(true);
    const node = await cachedNode('gpu-01');
    const other = await first.admin.registerNode({ bookingId: seed.bookingId, name: 'gpu-02' });
    expect((await beat(second, other.node_credential)).status).toBe(200);

    const client = await first.pool.connect();
    try {
      await client.query('begin');
      await revokeNodeCredential(client, node.node_id, new Date());
      // Not yet committed: nothing is announced, and both processes still accept the node.
      expect((await beat(second, node.node_credential)).status).toBe(200);
      await client.query('commit');
    } finally {
      client.release();
    }
    expect(await within(1_000, async () => (await beat(second, node.node_credential)).status === 401)).toBe(true);
    const refused = await beat(second, node.node_credential);
    expect([refused.status, refused.body.error.code]).toEqual([401, 'credential_revoked']);
    expect((await beat(first, node.node_credential)).body.error.code).toBe('credential_revoked');
    // Only that node: its neighbour's credential is still accepted.
    expect((await beat(second, other.node_credential)).status).toBe(200);
    expect(await revokeNodeCredential(first.pool, 'node_unknown', new Date())).toBeNull();
  });

  it('a revocation committed while the LISTEN connection is down is not missed', async () => {
    expect(await within(10_000, async () => (await listeners(first)) >= 2)).toBe(true);
    const node = await cachedNode('gpu-03');
    // Every process loses its LISTEN connection; the revocation commits with nobody to hear its NOTIFY.
    await first.pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query = 'listen ito_node_credentials'`,
    );
    await silently(first, node.node_id, true);
    expect(await within(5_000, async () => (await beat(second, node.node_credential)).status === 401)).toBe(true);
    expect((await beat(second, node.node_credential)).body.error.code).toBe('credential_revoked');
    // The listeners come back, and the cache with them.
    expect(await within(10_000, async () => (await listeners(first)) >= 2)).toBe(true);
    await cachedNode('gpu-04');
  });

  it("the operator's `ito-admin node revoke` revokes through the same announcement, and records it in the node's stream", async () => {
    expect(await within(10_000, async () => (await listeners(first)) >= 2)).toBe(true);
    const node = await cachedNode('gpu-05');
    const answer = await first.admin.revokeNode({ nodeId: node.node_id });
    expect(answer.node_id).toBe(node.node_id);
    expect(await within(1_000, async () => (await beat(second, node.node_credential)).status === 401)).toBe(true);
    const { rows } = await first.pool.query<{ type: string }>('select type from events where stream_id = $1 order by stream_version', [`node-${node.node_id}`]);
    expect(rows.map((r) => r.type)).toEqual(['NodeRegistered', 'NodeCredentialRevoked']);
    // An unknown node is not found, and nothing is recorded for it.
    await expect(first.admin.revokeNode({ nodeId: 'node_00000000000000000000000000000000' })).rejects.toMatchObject({ code: 'not_found' });
    const none = await first.pool.query("select 1 from events where stream_id = 'node-node_00000000000000000000000000000000'");
    expect(none.rowCount).toBe(0);
  });
});
