import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy in front of a real server. Connections whose request starts with `dropPrefix` are
 * forwarded in full, but when the server's answer comes back the client socket is destroyed instead: the
 * server acted, the client never learns the outcome. Every other connection is piped both ways untouched.
 */
export async function startDroppingProxy(upstream: string, dropPrefix: string, opts: { maxDrops?: number } = {}) {
  const target = new URL(upstream);
  let drops = 0;
  const maxDrops = opts.maxDrops ?? 1;
  const requests: string[] = [];
  const server = net.createServer((client) => {
    const up = net.connect(Number(target.port), target.hostname);
    let decided = false;
    let drop = false;
    client.on('data', (chunk) => {
      if (!decided) {
        decided = true;
        const head = chunk.toString('latin1');
        requests.push(head.split('\r\n')[0]!);
        drop = head.startsWith(dropPrefix) && drops < maxDrops;
        if (drop) drops++;
      }
      up.write(chunk);
    });
    up.on('data', (chunk) => {
      if (drop) {
        client.destroy();
        up.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on('end', () => up.end());
    up.on('end', () => client.end());
    client.on('error', () => up.destroy());
    up.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** First line of every request that went through, in order. */
    requests,
    get drops() {
      return drops;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
