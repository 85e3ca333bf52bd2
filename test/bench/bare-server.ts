/**
 * The baseline server for bench:heartbeats, run as its own child process (`node --import tsx bare-server.ts`):
 * bare Fastify routes at the heartbeat's paths (the single beat and the batch) that parse the same JSON bodies,
 * check the bearer header's shape and answer the same shapes, with no database. What the heartbeat route reaches beside it is
 * read as a share of what HTTP + JSON alone reach on this machine, at the same moment. Prints its URL on stdout.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/v1/agent/heartbeat', async (req, reply) => {
  const auth = req.headers.authorization;
  if (!auth || !auth.startsWith('Bearer ito_nc_')) return reply.code(401).send({ ok: false });
  const body = req.body as { tasks?: unknown[] };
  if (!Array.isArray(body.tasks)) return reply.code(400).send({ ok: false });
  return { ok: true, live_api_contacted: true, notice: null, data: { interval_s: 2, stop: [], directives: [] } };
});
// The batched route's twin: the same body parsed, each beat's credential and tasks looked at, each beat answered.
app.post('/v1/agent/heartbeats', async (req, reply) => {
  const auth = req.headers.authorization;
  if (!auth || !auth.startsWith('Bearer ito_nc_')) return reply.code(401).send({ ok: false });
  const body = req.body as { beats?: Array<{ credential?: unknown; tasks?: unknown }> };
  if (!Array.isArray(body.beats) || body.beats.length > 64) return reply.code(400).send({ ok: false });
  const beats = body.beats.map((b) =>
    typeof b.credential === 'string' && b.credential.startsWith('ito_nc_') && Array.isArray(b.tasks) ? { ok: true, node_id: 'node_bare', stop: [], directives: [] } : { ok: false },
  );
  return { ok: true, live_api_contacted: true, notice: null, data: { interval_s: 2, beats } };
});
app.get('/readyz', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
