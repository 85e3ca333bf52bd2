import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Responder = (req: SeenRequest) => { status: number; body: unknown } | 'destroy';

/**
 * A real loopback HTTP server that records every request it receives, so a test can prove that a refusal
 * sent nothing, and what exactly was sent when something was.
 */
export async function startCountingServer(respond: Responder = () => ({ status: 200, body: { ok: true, live_api_contacted: true, notice: null, data: {} } })) {
  const seen: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const record = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(record);
      const answer = respond(record);
      if (answer === 'destroy') {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export const envelope = (data: unknown) => ({ ok: true, live_api_contacted: true, notice: null, data });
export const refusal = (code: string, message: string, retryable = false) => ({ ok: false, live_api_contacted: true, notice: null, error: { code, message, retryable } });
