import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy in front of PostgreSQL that the test can pause: while paused, bytes in both directions
 * are held (connections stay open, queries hang, as when a database stalls or a network partition heals);
 * resuming delivers them. New connections made during the pause wait too.
 */
export async function startPausableProxy(upstreamPort: number, upstreamHost = '127.0.0.1') {
  let paused = false;
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk) => {
      if (!paused) to.write(chunk);
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
    forward(client, up);
    forward(up, client);
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
      paused = true;
    },
    resume() {
      paused = false;
      for (const release of held.splice(0)) release();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
