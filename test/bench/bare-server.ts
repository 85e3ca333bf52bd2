/**
 * The baseline server for bench:heartbeats, run as its own child process (`node --import tsx bare-server.ts`):
 * a bare Fastify route at the heartbeat's path that parses the same JSON body, checks the bearer header against
 * an in-memory set and answers the same shape, with no database. What the heartbeat route reaches beside it is
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
app.get('/readyz', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
