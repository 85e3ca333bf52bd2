import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../src/transport-error.js';
import { exchange, type ExchangeRequest } from '../src/exchange.js';

/**
 * One HTTP exchange against loopback servers that misbehave on purpose (the one place a hand-written server is
 * right: to inject a transport fault). Each failure is classified by how far the request got, which decides
 * whether a mutation may be retried: before the connection, nothing reached the server; after it, the outcome
 * is unknown. Every case asserts the code, both flags, the phase and the message.
 */
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function listen(server: net.Server): Promise<number> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** A TCP server that does `onConnection` with each socket and nothing else: no HTTP, no TLS. */
const raw = (onConnection: (s: net.Socket) => void) => listen(net.createServer(onConnection));
const httpServer = (handler: http.RequestListener) => listen(http.createServer(handler));

function request(url: string, o: Partial<ExchangeRequest> = {}): ExchangeRequest {
  return { method: 'POST', url: new URL(url), headers: { 'content-type': 'application/json' }, body: '{"a":1}', connectTimeoutMs: 2000, timeoutMs: 5000, ...o };
}

async function failure(p: Promise<unknown>): Promise<TransportError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TransportError);
  return err as TransportError;
}

const facts = (e: TransportError) => ({ code: e.code, liveApiContacted: e.liveApiContacted, bodySent: e.bodySent, details: e.details, message: e.message });

describe('an exchange that gets an answer', () => {
  it('sends the method, headers and body, and returns the status and the whole body', async () => {
    let seen = '';
    const port = await httpServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen = `${req.method} ${req.url} ${req.headers['content-type']} ${body}`;
        res.writeHead(201);
        res.end('{"ok":true}');
      });
    });
    await expect(exchange(request(`http://127.0.0.1:${port}/v1/runs`))).resolves.toEqual({ status: 201, body: '{"ok":true}' });
    expect(seen).toBe('POST /v1/runs application/json {"a":1}');
  });

  it('is not cut short by the connect deadline once connected, however long the answer takes within the overall one', async () => {
    const port = await httpServer((_req, res) => setTimeout(() => res.end('late'), 300));
    await expect(exchange(request(`http://127.0.0.1:${port}/`, { connectTimeoutMs: 50, timeoutMs: 5000 }))).resolves.toEqual({ status: 200, body: 'late' });
  });

  it('reads an answer of exactly 32 MiB, and refuses one byte more as garbled', async () => {
    const MAX = 32 * 1024 * 1024;
    let size = MAX;
    const port = await httpServer((_req, res) => res.end(Buffer.alloc(size, 0x61)));
    const ok = await exchange(request(`http://127.0.0.1:${port}/`, { method: 'GET', body: undefined }));
    expect(ok.body.length).toBe(MAX);
    size = MAX + 1;
    const e = await failure(exchange(request(`http://127.0.0.1:${port}/`, { method: 'GET', body: undefined })));
    expect(facts(e)).toEqual({
      code: 'transport_ambiguous',
      liveApiContacted: true,
      bodySent: true,
      details: { host: `127.0.0.1:${port}`, phase: 'after_send' },
      message: `the connection to 127.0.0.1:${port} failed after the request was sent (response too large); the outcome is unknown`,
    });
  });
});

describe('failures before a connection: nothing reached the server', () => {
  it('a closed port is connect_failed, naming the errno', async () => {
    const port = await raw(() => {});
    await closers.pop()!();
    const e = await failure(exchange(request(`http://127.0.0.1:${port}/`)));
    expect(facts(e)).toEqual({
      code: 'connect_failed',
      liveApiContacted: false,
      bodySent: false,
      details: { host: `127.0.0.1:${port}`, phase: 'connecting' },
      message: `could not connect to 127.0.0.1:${port}: ECONNREFUSED`,
    });
  });

  it('over https, a TCP connection is not yet a connection: a peer that hangs up during the handshake is connect_failed', async () => {
    const port = await raw((s) => s.destroy());
    const e = await failure(exchange(request(`https://127.0.0.1:${port}/`)));
    expect(facts(e)).toMatchObject({ code: 'connect_failed', liveApiContacted: false, bodySent: false, details: { host: `127.0.0.1:${port}`, phase: 'connecting' } });
    expect(e.message.startsWith(`could not connect to 127.0.0.1:${port}: `)).toBe(true);
  });

  it('a handshake that never completes hits the connect deadline', async () => {
    const port = await raw(() => {});
    const e = await failure(exchange(request(`https://127.0.0.1:${port}/`, { connectTimeoutMs: 100, timeoutMs: 5000 })));
    expect(facts(e)).toEqual({
      code: 'connect_failed',
      liveApiContacted: false,
      bodySent: false,
      details: { host: `127.0.0.1:${port}`, phase: 'connecting' },
      message: `could not connect to 127.0.0.1:${port}: no connection within 100 ms`,
    });
  });

  it('or the overall deadline, when that comes first', async () => {
    const port = await raw(() => {});
    const e = await failure(exchange(request(`https://127.0.0.1:${port}/`, { connectTimeoutMs: 5000, timeoutMs: 100 })));
    expect(facts(e)).toEqual({
      code: 'timeout',
      liveApiContacted: false,
      bodySent: false,
      details: { host: `127.0.0.1:${port}`, phase: 'connecting' },
      message: `no connection to 127.0.0.1:${port} within 100 ms`,
    });
  });
});

describe('failures after a connection: the outcome is unknown', () => {
  it('a server that never answers is a timeout after the body was sent', async () => {
    const port = await httpServer(() => {});
    const e = await failure(exchange(request(`http://127.0.0.1:${port}/`, { timeoutMs: 150 })));
    expect(facts(e)).toEqual({
      code: 'timeout',
      liveApiContacted: true,
      bodySent: true,
      details: { host: `127.0.0.1:${port}`, phase: 'after_send' },
      message: `no complete answer from 127.0.0.1:${port} within 150 ms; the outcome is unknown`,
    });
  });

  it('a connection dropped after the request arrived is ambiguous, naming the errno', async () => {
    const port = await httpServer((req) => req.on('end', () => req.socket.destroy()).resume());
    const e = await failure(exchange(request(`http://127.0.0.1:${port}/`)));
    expect(facts(e)).toEqual({
      code: 'transport_ambiguous',
      liveApiContacted: true,
      bodySent: true,
      details: { host: `127.0.0.1:${port}`, phase: 'after_send' },
      message: `the connection to 127.0.0.1:${port} failed after the request was sent (ECONNRESET); the outcome is unknown`,
    });
  });

  it('a connection dropped while the body is still going out is ambiguous, with the body not all sent', async () => {
    const port = await raw((s) => s.once('data', () => s.destroy()));
    const e = await failure(exchange(request(`http://127.0.0.1:${port}/`, { body: 'x'.repeat(64 * 1024 * 1024) })));
    expect(facts(e)).toMatchObject({ code: 'transport_ambiguous', liveApiContacted: true, bodySent: false, details: { phase: 'sending' } });
  });

  it('an answer cut off before its declared length is ambiguous', async () => {
    const port = await raw((s) =>
      s.once('data', () => {
        s.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n0123456789');
        setTimeout(() => s.destroy(), 20);
      }),
    );
    const e = await failure(exchange(request(`http://127.0.0.1:${port}/`)));
    expect(facts(e)).toEqual({
      code: 'transport_ambiguous',
      liveApiContacted: true,
      bodySent: true,
      details: { host: `127.0.0.1:${port}`, phase: 'after_send' },
      message: `the connection to 127.0.0.1:${port} failed after the request was sent (response aborted); the outcome is unknown`,
    });
  });
});
