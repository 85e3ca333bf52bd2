import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { TransportError } from './transport-error.js';

export interface ExchangeRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | undefined;
  /** Time allowed to establish the connection (TCP, and TLS for https). */
  connectTimeoutMs: number;
  /** Time allowed for the whole exchange, connection included. */
  timeoutMs: number;
}

export interface ExchangeResponse {
  status: number;
  body: string;
}

/** Larger answers are treated as garbled: no route of the API returns anything near this. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * One HTTP exchange on a fresh connection (no keep-alive pool, so "connected" always refers to this request's
 * own socket), with a connect deadline and an overall deadline. Failures are classified by how far the
 * request got: before the connection existed nothing reached the server; after it, the outcome is unknown.
 */
export function exchange(req: ExchangeRequest): Promise<ExchangeResponse> {
  const transport = req.url.protocol === 'https:' ? https : http;
  const where = req.url.host;
  return new Promise<ExchangeResponse>((resolve, reject) => {
    let connected = false;
    let bodySent = false;
    let settled = false;
    let reason: 'connect_timeout' | 'timeout' | null = null;

    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(overallTimer);
      fn();
    };

    const request = transport.request(req.url, { method: req.method, headers: req.headers, agent: false });

    const connectTimer = setTimeout(() => {
      if (!connected) {
        reason = 'connect_timeout';
        request.destroy(new Error('connect timeout'));
      }
    }, req.connectTimeoutMs);
    const overallTimer = setTimeout(() => {
      reason = 'timeout';
      request.destroy(new Error('overall timeout'));
    }, req.timeoutMs);

    // agent: false gives every request a fresh socket, still connecting when it is handed over: connected is the
    // moment its connection (and, for https, its TLS session) is established.
    request.on('socket', (socket: Socket) => {
      socket.once(req.url.protocol === 'https:' ? 'secureConnect' : 'connect', () => (connected = true));
    });
    request.on('finish', () => (bodySent = true));

    request.on('error', (err: NodeJS.ErrnoException) => {
      finish(() => reject(classify(err)));
    });

    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          request.destroy(new Error('response too large'));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err: NodeJS.ErrnoException) => finish(() => reject(classify(err))));
      res.on('aborted', () => finish(() => reject(classify(new Error('response aborted')))));
      res.on('end', () => {
        if (!res.complete) {
          finish(() => reject(classify(new Error('response incomplete'))));
          return;
        }
        finish(() => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
    });

    function classify(err: NodeJS.ErrnoException): TransportError {
      const details = { host: where, phase: connected ? (bodySent ? 'after_send' : 'sending') : 'connecting' };
      if (!connected) {
        if (reason === 'timeout') {
          return new TransportError('timeout', `no connection to ${where} within ${req.timeoutMs} ms`, false, false, details);
        }
        const why = reason === 'connect_timeout' ? `no connection within ${req.connectTimeoutMs} ms` : (err.code ?? err.message);
        return new TransportError('connect_failed', `could not connect to ${where}: ${why}`, false, false, details);
      }
      if (reason === 'timeout') {
        return new TransportError('timeout', `no complete answer from ${where} within ${req.timeoutMs} ms; the outcome is unknown`, true, bodySent, details);
      }
      return new TransportError(
        'transport_ambiguous',
        `the connection to ${where} failed after the request was sent (${err.code ?? err.message}); the outcome is unknown`,
        true,
        bodySent,
        details,
      );
    }

    request.end(req.body);
  });
}
