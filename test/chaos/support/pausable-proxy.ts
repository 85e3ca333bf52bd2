import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy (in front of PostgreSQL, or of the API) that the test can pause: while paused, bytes in
 * both directions are held (connections stay open, queries hang, as when a database stalls or a network partition
 * heals); resuming delivers them. New connections made during the pause wait too. `pauseResponses()` holds only
 * what the upstream sends back: the request arrives and is acted on, its answer does not (yet) reach the client.
 */
export async function startPausableProxy(upstreamPort: number, upstreamHost = '127.0.0.1') {
  const paused = { requests: false, responses: false };
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket, direction: keyof typeof paused) => {
    from.on('data', (chunk) => {
      if (!paused[direction]) to.write(chunk);
      else {
        from.pause();
        held.push(() => {
          to.write(chunk);
          from.resume();
        });
      }
    });
  };
  const server = net.createServer((client) => {
    const up = net.connect(upstreamPort, upstreamHost);
    sockets.add(client);
    sockets.add(up);
    forward(client, up, 'requests');
    forward(up, client, 'responses');
    const end = () => {
      client.destroy();
      up.destroy();
      sockets.delete(client);
      sockets.delete(up);
    };
    client.on('close', end);
    up.on('close', end);
    client.on('error', end);
    up.on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    pause() {
      paused.requests = true;
      paused.responses = true;
    },
    pauseResponses() {
      paused.responses = true;
    },
    resume() {
      paused.requests = false;
      paused.responses = false;
      for (const release of held.splice(0)) release();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
