import { migrateDatabase } from '@ito/ledger';
import { createScratchDatabase } from '../support/scratch-db.js';
import { startChildServer } from './child-server.js';
import { fleetOf, runStep, seedNodes } from './heartbeat-load.js';
import { loadAverage1m } from './proc-cpu.js';
const db = await createScratchDatabase('postgres://postgres@127.0.0.1:5432/postgres', 'ito_probe_ab');
let api;
try {
  await migrateDatabase(db.url);
  const fleet = await seedNodes(db.url, 2000);
  const creds = fleet.map((n) => n.credential);
  api = await startChildServer({ databaseUrl: db.url, roles: ['api'] });
  const t = { seconds: 6, warmupSeconds: 1 };
  await runStep(api.url, fleetOf(creds, 2000, 1), 1000, api.pid, { seconds: 3, warmupSeconds: 0 });
  console.log('load', loadAverage1m());
  for (let round = 0; round < 2; round++) {
    for (const h of [1, 16, 64]) {
      const s = await runStep(api.url, fleetOf(creds, 2000, h), 1000, api.pid, t);
      console.log(`host ${h}: achieved ${s.achieved_per_s} p50 ${s.p50_ms} p99 ${s.p99_ms} shed ${s.shed} errors ${s.errors} server ms/beat ${s.cpu_ms_per_beat.server} gen ${s.cpu_ms_per_beat.load_generator} pg(all) ${s.cpu_ms_per_beat.postgres}`);
    }
  }
  console.log('load', loadAverage1m());
} finally {
  await api?.stop();
  await db.drop();
}
