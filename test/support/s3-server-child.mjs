// A real S3-compatible server (s3rver) on loopback, in a process of its own so a test can kill it mid-request.
// argv: <directory> <port> <bucket>...; prints one JSON line {"port": n} once it listens.
import S3rver from 's3rver';

const [directory, port, ...buckets] = process.argv.slice(2);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), directory, silent: true, configureBuckets: buckets.map((name) => ({ name })) });
const { port: bound } = await server.run();
process.stdout.write(`${JSON.stringify({ port: bound })}\n`);
process.on('SIGTERM', () => {
  server.close().then(() => process.exit(0));
});
