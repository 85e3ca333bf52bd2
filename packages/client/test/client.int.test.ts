import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ItoApi, ItoClient, TransportError, poll } from '@ito/client';

interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  body: string;
}
type Behaviour = (req: Seen, res: http.ServerResponse, socketDestroy: () => void) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(behaviour: Behaviour) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const record = { method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string | undefined, body };
      seen.push(record);
      behaviour(record, res, () => req.socket.destroy());
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const okEnv = (data: unknown) => ({ ok: true, live_api_contacted: true, notice: null, data });
const noWait = async () => {};
const client = (url: string, extra: Partial<ConstructorParameters<typeof ItoClient>[0]> = {}) =>
  new ItoClient({ baseUrl: url, credential: 'sk_never_in_errors', sleep: noWait, ...extra });

const TRAIN = { booking_id: 'bkg_1', manifest: '{}', manifest_digest: 'sha256:00', confirmation_ref: 'cnf_1' };

describe('keyed mutation after an ambiguous failure', () => {
  it('finds the run by its key and reports it without sending the body again', async () => {
    const runs: { run_id: string; state: string }[] = [];
    const srv = await serve((req, res, destroy) => {
      if (req.method === 'POST') {
        runs.push({ run_id: 'run_1', state: 'reserved' }); // the server acted, then the connection died
        destroy();
        return;
      }
      send(res, 200, okEnv({ runs: runs.filter(() => req.url === '/v1/runs?idempotency_key=key-1') }));
    });
    const answer = await new ItoApi(client(srv.url)).train(TRAIN, 'key-1');
    expect(answer).toMatchObject({ ok: true, data: { run_id: 'run_1' } });
    expect(answer.notice).toMatch(/recovered after an ambiguous transport failure/);
    expect(srv.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(srv.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/runs', 'GET /v1/runs?idempotency_key=key-1']);
  });

  it('resends the same body with the same key only after the server says no run exists', async () => {
    let posts = 0;
    const srv = await serve((req, res, destroy) => {
      if (req.method === 'POST') {
        posts++;
        if (posts === 1) return destroy(); // lost before the server acted
        return send(res, 201, okEnv({ run_id: 'run_2', state: 'reserved' }));
      }
      send(res, 200, okEnv({ runs: [] }));
    });
    const answer = await new ItoApi(client(srv.url)).train(TRAIN, 'key-2');
    expect(answer).toMatchObject({ ok: true, data: { run_id: 'run_2' } });
    const postsSeen = srv.seen.filter((r) => r.method === 'POST');
    expect(postsSeen).toHaveLength(2);
    expect(postsSeen[1]!.key).toBe('key-2');
    expect(postsSeen[1]!.body).toBe(postsSeen[0]!.body);
    expect(srv.seen[1]!.method).toBe('GET');
  });

  it('gives up with transport_ambiguous when the lookup itself fails, naming the key and not the credential', async () => {
    const srv = await serve((req, res, destroy) => (req.method === 'POST' ? destroy() : send(res, 500, { oops: true })));
    const err = await new ItoApi(client(srv.url)).train(TRAIN, 'key-3').catch((e) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err.code).toBe('transport_ambiguous');
    expect(err.liveApiContacted).toBe(true);
    expect(err.details).toMatchObject({ idempotency_key: 'key-3' });
    expect(JSON.stringify(err.toEnvelope())).not.toContain('sk_never_in_errors');
    expect(srv.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('stops after the bounded number of sends', async () => {
    const srv = await serve((req, res, destroy) => (req.method === 'POST' ? destroy() : send(res, 200, okEnv({ runs: [] }))));
    await expect(new ItoApi(client(srv.url, { mutationAttempts: 3 })).train(TRAIN, 'key-4')).rejects.toMatchObject({ code: 'transport_ambiguous' });
    expect(srv.seen.filter((r) => r.method === 'POST')).toHaveLength(3);
  });
});

describe('other calls', () => {
  it('never resends a keyless mutation whose body was sent', async () => {
    const srv = await serve((_req, _res, destroy) => destroy());
    await expect(client(srv.url).post('/confirmations', { action: 'run.cancel', run_id: 'r' })).rejects.toMatchObject({ code: 'transport_ambiguous', liveApiContacted: true });
    expect(srv.seen).toHaveLength(1);
  });

  it('retries a GET on 5xx with a bound', async () => {
    const srv = await serve((_req, res) => send(res, 503, { ok: false, live_api_contacted: true, notice: null, error: { code: 'internal_error', message: 'busy', retryable: true } }));
    const answer = await client(srv.url, { getAttempts: 3 }).get('/bookings');
    expect(answer.ok).toBe(false);
    expect(srv.seen).toHaveLength(3);
  });

  it('classifies a closed port as connect_failed with nothing contacted', async () => {
    const err = await client('http://127.0.0.1:9', { getAttempts: 1 }).get('/bookings').catch((e) => e);
    expect(err).toMatchObject({ code: 'connect_failed', liveApiContacted: false });
  });

  it('classifies a server that never answers as timeout with the server contacted', async () => {
    const srv = await serve(() => {});
    const err = await client(srv.url, { getAttempts: 1, timeoutMs: 200 }).get('/runs/r').catch((e) => e);
    expect(err).toMatchObject({ code: 'timeout', liveApiContacted: true });
  });

  it('reads a garbled answer as transport_ambiguous', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.end('<html>not json</html>');
    });
    await expect(client(srv.url, { getAttempts: 1 }).get('/runs/r')).rejects.toMatchObject({ code: 'transport_ambiguous' });
  });

  it('stops polling at once on credential_revoked', async () => {
    const srv = await serve((_req, res) => send(res, 401, { ok: false, live_api_contacted: true, notice: null, error: { code: 'credential_revoked', message: 'revoked', retryable: false } }));
    const api = new ItoApi(client(srv.url));
    const answer = await poll(() => api.getRun('run_1'), { intervalMs: 1, done: () => false, maxIterations: 50, sleep: noWait });
    expect(answer).toMatchObject({ ok: false, error: { code: 'credential_revoked' } });
    expect(srv.seen).toHaveLength(1);
  });
});
