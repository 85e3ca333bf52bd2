/**
 * `npm run bench:ledger -- --json [--seconds N] [--writers W]`
 *
 * Two phases in one run, against ITO_DATABASE_URL's server (default the local one), in a scratch database
 * that is migrated first and dropped afterwards:
 *  1. baseline: W node-pg clients doing plain single-row INSERTs into `bench_plain`, a copy of `events`
 *     (same columns, defaults, identity and indexes: CREATE TABLE … LIKE events INCLUDING ALL);
 *  2. ledger: W writers calling ledger.append(newStream, [RunReserved], no_stream) — the shape of ReserveRun —
 *     while a sealer calls sealPending() in a loop beside them. At the end every event is sealed and verify()
 *     recomputes the whole chain.
 * Reports appends/s, the baseline's inserts/s, their ratio, append latency p50/p99, events sealed, verify.
 *
 * Why the chain is sealed after commit rather than on the append path: a chain link needs the previous link,
 * so computing it inside the append serialises every append behind one lock (measured with pgbench on this
 * machine: ≈1,660/s against ≈14,900/s for plain INSERTs). Appends here carry only their own content hash and
 * commit concurrently (their WAL flushes group); one sealer links them afterwards in safe order, thousands per
 * statement, so the chain costs the writers almost nothing and lags them by one sealer pass.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ok } from '../../packages/contracts/src/index.js';
import { createLedger, migrateDatabase } from '../../packages/ledger/src/index.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const flag = (name: string, dflt: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : dflt;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const SECONDS = flag('--seconds', 10);
const WRITERS = flag('--writers', 16);
const adminUrl = process.env.ITO_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const say = (line: string): void => {
  if (!json) process.stdout.write(`${line}\n`);
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function scratchDb(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ito_bench_ledger_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** The payload of a RunReserved event, about the size the API writes. */
function reservedData(w: number, i: number): Record<string, unknown> {
  return {
    runId: `run_${w}_${i}`,
    bookingId: 'bk_bench',
    manifestDigest: 'sha256:4b2f0c9e1d7a6b5c3e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d',
    confirmationRef: `cf_${w}_${i}`,
    estimatedCostUsd: 1234.5,
    maxIncrementalCostUsd: 200,
    nodes: 4,
    gpusPerNode: 8,
  };
}

async function runFor(seconds: number, writers: number, once: (w: number, i: number) => Promise<void>): Promise<{ count: number; latencies: number[]; elapsed: number }> {
  const cpu0 = process.cpuUsage();
  const deadline = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t0 = performance.now();
        await once(w, i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  if (process.env.BENCH_CPU) process.stderr.write(`node cpu ${((cpu.user + cpu.system) / 1e6).toFixed(2)}s over ${((performance.now() - start) / 1000).toFixed(2)}s\n`);
  return { count: latencies.length, latencies, elapsed: (performance.now() - start) / 1000 };
}

async function baseline(pool: pg.Pool): Promise<number> {
  await pool.query('create table bench_plain (like events including all)');
  const at = new Date().toISOString();
  const { count, elapsed } = await runFor(SECONDS, WRITERS, async (w, i) => {
    await pool.query({
      name: 'bench_plain_insert',
      text: `insert into bench_plain (stream_id, stream_version, tenant_id, type, schema_version, data, metadata, recorded_at, content_hash)
             values ($1, 1, $2, 'RunReserved', 1, $3::jsonb, $4::jsonb, $5, $6)`,
      values: [`p-${w}-${i}`, 'tenant-bench', JSON.stringify(reservedData(w, i)), '{"actor":"key_bench"}', at, 'x'.repeat(64)],
    });
  });
  return count / elapsed;
}

async function ledgerPhase(pool: pg.Pool, sealerPool: pg.Pool) {
  const ledger = createLedger({ pool });
  const sealer = createLedger({ pool: sealerPool });
  let writing = true;
  let sealedDuring = 0;
  const sealing = (async () => {
    while (writing && !process.env.BENCH_NO_SEALER) {
      sealedDuring += await sealer.sealPending({ batchSize: 5000 });
      await new Promise((r) => setTimeout(r, Number(process.env.BENCH_SEAL_MS ?? 50)));
    }
  })();
  const run = await runFor(SECONDS, WRITERS, async (w, i) => {
    await ledger.append(`run_${w}_${i}`, [{ type: 'RunReserved', data: reservedData(w, i), metadata: { actor: 'key_bench', requestId: `req_${w}_${i}` } }], {
      tenantId: 'tenant-bench',
      expectedVersion: 'no_stream',
    });
  });
  writing = false;
  await sealing;
  let sealedAfter = 0;
  for (let n = -1; n !== 0; ) {
    n = await sealer.sealPending({ batchSize: 5000 });
    sealedAfter += n;
  }
  const head = await sealer.chainHead();
  const verify = await sealer.verify();
  return { run, sealedDuring, sealedAfter, head, verify };
}

async function main(): Promise<void> {
  const db = await scratchDb();
  const pool = new pg.Pool({ connectionString: db.url, max: WRITERS });
  const sealerPool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    await migrateDatabase(db.url);
    say(`baseline: ${WRITERS} clients, plain single-row INSERT, ${SECONDS}s …`);
    const baselinePerS = await baseline(pool);
    say(`  ${baselinePerS.toFixed(0)} inserts/s`);
    say(`ledger: ${WRITERS} writers, append(new stream, no_stream), sealer running, ${SECONDS}s …`);
    const { run, sealedDuring, sealedAfter, head, verify } = await ledgerPhase(pool, sealerPool);
    const appendsPerS = run.count / run.elapsed;
    const sorted = [...run.latencies].sort((a, b) => a - b);
    const data = {
      appends_per_s: Math.round(appendsPerS),
      events_appended: run.count,
      writers: WRITERS,
      seconds: SECONDS,
      baseline_inserts_per_s: Math.round(baselinePerS),
      ratio: Number((appendsPerS / baselinePerS).toFixed(3)),
      p50_ms: Number(percentile(sorted, 50).toFixed(2)),
      p99_ms: Number(percentile(sorted, 99).toFixed(2)),
      sealed: head.count,
      sealed_while_writing: sealedDuring,
      sealed_after_writing: sealedAfter,
      verify_ok: verify.ok && head.count === run.count,
    };
    if (json) process.stdout.write(`${JSON.stringify(ok(data, { liveApiContacted: false }))}\n`);
    else {
      say(`  ${data.appends_per_s} appends/s (${data.events_appended} events), p50 ${data.p50_ms} ms, p99 ${data.p99_ms} ms`);
      say(`  ratio to plain INSERT: ${data.ratio}`);
      say(`  sealed ${data.sealed} (${sealedDuring} while writing, ${sealedAfter} after), verify ${verify.ok ? 'ok' : JSON.stringify(verify)}`);
    }
    if (!data.verify_ok) process.exitCode = 1;
  } finally {
    await pool.end();
    await sealerPool.end();
    await new Promise((r) => setTimeout(r, 100));
    await db.drop();
  }
}

await main();
