/**
 * `npm run bench:storage -- --json [--mib 64] [--rounds 5] [--docs 20000] [--small]`
 *
 * Against a real S3-compatible server started on loopback for the run (s3rver, in a process of its own, as the
 * tests start it), in one process, over the same bytes:
 *
 * - **upload**: `S3StorageDriver.write` of a `--mib` object (a multipart upload past 16 MiB) beside a plain SDK
 *   `PutObject` of the same bytes with the same client settings;
 * - **download**: `S3StorageDriver.readStream` read to its end with its sha256 computed as the bytes pass, beside a
 *   plain SDK `GetObject` whose body is read to its end;
 * - **data prep**: the worker's data prep (`checkDataRefs`: digest check, exact dedup, decontamination, near dedup,
 *   prepared shards written) over a generated corpus of `--docs` documents on `s3://` beside the same corpus on
 *   `file://`, prepared data written to the same kind of storage as its input.
 *
 * The sides alternate within each of `--rounds` rounds (which goes first alternates too), so load on the shared
 * machine weighs on both alike; the medians are compared. Goals (issue 27): driver upload and download ≥ 0.9 × the
 * plain SDK's; data prep on `s3://` ≥ 0.8 × the same data on `file://`. `--small`: 8 MiB, 2 rounds, 2,000 docs.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3StorageDriver, configuredStorageRegistry } from '@ito/storage';
import { checkDataRefs } from '../../apps/worker/src/stages/data-prep.js';
import { generateBattery, generateCorpus } from '../fixtures/dataprep/generator.js';
import { createTokenHasher } from '@ito/dataprep';
import { smallManifest } from '../support/manifests.js';
import { startS3Server } from '../support/s3-server.js';
import { benchArgs } from './args.js';

const { json, small, opt } = benchArgs();
const MIB = Number(opt('--mib', small ? '8' : '64'));
const ROUNDS = Number(opt('--rounds', small ? '2' : '5'));
const DOCS = Number(opt('--docs', small ? '2000' : '20000'));
const say = (line: string) => {
  if (!json) process.stderr.write(`${line}\n`);
};
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

const s3 = await startS3Server(['ito-bench']);
const dir = mkdtempSync(join(tmpdir(), 'ito-bench-storage-'));
const options = s3.options({ requestTimeoutMs: 120_000, maxAttempts: 3 });
const driver = new S3StorageDriver(options);
// The baseline: the same SDK, the same endpoint, addressing, credentials and checksum settings, no driver.
const sdk = new S3Client({
  endpoint: options.endpoint!,
  forcePathStyle: true,
  region: options.region!,
  credentials: options.credentials!,
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return (performance.now() - start) / 1000;
}

try {
  const bytes = Buffer.alloc(MIB * 1024 * 1024);
  for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE((i * 2654435761) >>> 0, i);
  const digest = sha256(bytes);
  const seconds = { driver_put: [] as number[], sdk_put: [] as number[], driver_get: [] as number[], sdk_get: [] as number[] };

  const sides = {
    driver_put: () => driver.write('s3://ito-bench/objects/driver', bytes),
    sdk_put: () => sdk.send(new PutObjectCommand({ Bucket: 'ito-bench', Key: 'objects/sdk', Body: bytes, ContentLength: bytes.length })),
    driver_get: async () => {
      const stream = await driver.readStream('s3://ito-bench/objects/driver');
      for await (const _chunk of stream);
      if (stream.sha256() !== digest) throw new Error('the driver read other bytes than were written');
    },
    sdk_get: async () => {
      const answer = await sdk.send(new GetObjectCommand({ Bucket: 'ito-bench', Key: 'objects/sdk' }));
      let n = 0;
      for await (const chunk of answer.Body as AsyncIterable<Uint8Array>) n += chunk.length;
      if (n !== bytes.length) throw new Error('the SDK read a short body');
    },
  };
  // A warm-up of each side: connections opened, code paths compiled.
  for (const run of Object.values(sides)) await run();
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['driver_put', 'sdk_put', 'driver_get', 'sdk_get'] as const) : (['sdk_put', 'driver_put', 'sdk_get', 'driver_get'] as const);
    for (const side of order) seconds[side].push(await timed(sides[side]));
    say(`round ${r + 1}/${ROUNDS}: ${Object.entries(seconds).map(([k, v]) => `${k} ${round(MIB / v.at(-1)!, 1)} MiB/s`).join(', ')}`);
  }
  const mibPerS = (k: keyof typeof seconds) => round(MIB / median(seconds[k]), 1);

  // Data prep over the same generated corpus on file:// and on s3://.
  const hasher = await createTokenHasher();
  const batteryItems = generateBattery();
  mkdirSync(join(dir, 'evals', 'ito-evals'), { recursive: true });
  writeFileSync(join(dir, 'evals', 'ito-evals', 'v1.jsonl'), `${batteryItems.map((i) => JSON.stringify(i)).join('\n')}\n`);
  const lines: string[] = [];
  for (const doc of generateCorpus({ docs: DOCS, battery: batteryItems, hasher, words: [80, 240], seed: 2026 })) lines.push(doc.line);
  const corpus = `${lines.join('\n')}\n`;
  const report = '{"checked":"ito-evals/v1"}\n';
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'corpus.jsonl'), corpus);
  writeFileSync(join(dir, 'data', 'report.json'), report);
  await driver.write('s3://ito-bench/data/corpus.jsonl', Buffer.from(corpus));
  await driver.write('s3://ito-bench/data/report.json', Buffer.from(report));
  const storage = configuredStorageRegistry({ s3: options });
  const manifestOn = (ref: string, reportRef: string, checkpoints: string) =>
    JSON.parse(
      smallManifest((m) => {
        m.checkpoint.storage = checkpoints;
        m.data = [{ ...m.data[0], ref, sha256: sha256(corpus), decontamination: { ...m.data[0].decontamination, report_ref: reportRef, report_sha256: sha256(report), contaminated_fraction: 0.05 } }];
      }),
    );
  const prepSides = {
    file: (n: number) => checkDataRefs(`run_file${n}`, manifestOn(`file://${dir}/data/corpus.jsonl`, `file://${dir}/data/report.json`, `file://${dir}/out/`), { evalBatteryDir: join(dir, 'evals'), storage, fileRoots: [realpathSync(dir)] }),
    s3: (n: number) => checkDataRefs(`run_s3${n}`, manifestOn('s3://ito-bench/data/corpus.jsonl', 's3://ito-bench/data/report.json', 's3://ito-bench/out/'), { evalBatteryDir: join(dir, 'evals'), storage, fileRoots: [realpathSync(dir)] }),
  };
  const prepSeconds = { file: [] as number[], s3: [] as number[] };
  const prepRounds = Math.max(1, Math.min(ROUNDS, 3));
  let docsOut: Record<string, unknown> = {};
  for (let r = 0; r < prepRounds; r++) {
    for (const side of r % 2 === 0 ? (['file', 's3'] as const) : (['s3', 'file'] as const)) {
      let outcome: Awaited<ReturnType<typeof prepSides.file>> | undefined;
      prepSeconds[side].push(await timed(async () => (outcome = await prepSides[side](r))));
      const prepared = outcome!.facts.find((f) => f.type === 'DataPrepared');
      if (!prepared) throw new Error(`data prep on ${side} prepared nothing: ${outcome!.ok ? '' : outcome!.reason}`);
      docsOut[side] = (prepared.data as { docs_out: number }).docs_out;
    }
    say(`data prep round ${r + 1}/${prepRounds}: file ${round(prepSeconds.file.at(-1)!, 2)} s, s3 ${round(prepSeconds.s3.at(-1)!, 2)} s`);
  }
  if (docsOut.file !== docsOut.s3) throw new Error('data prep kept different documents on file:// and s3://');
  const docsPerS = (k: keyof typeof prepSeconds) => Math.round(DOCS / median(prepSeconds[k]));

  const upload = round(mibPerS('driver_put') / mibPerS('sdk_put'), 3);
  const download = round(mibPerS('driver_get') / mibPerS('sdk_get'), 3);
  const prep = round(docsPerS('s3') / docsPerS('file'), 3);
  const result = {
    bench: 'storage',
    store: 's3rver on loopback (its own process)',
    object_mib: MIB,
    rounds: ROUNDS,
    upload_mib_per_s: { driver: mibPerS('driver_put'), sdk_put_object: mibPerS('sdk_put'), ratio: upload },
    download_mib_per_s: { driver_with_sha256: mibPerS('driver_get'), sdk_get_object: mibPerS('sdk_get'), ratio: download },
    data_prep_docs_per_s: { docs: DOCS, bytes: Buffer.byteLength(corpus), file: docsPerS('file'), s3: docsPerS('s3'), ratio: prep, docs_out: docsOut.s3 },
    goals: {
      upload_through_driver_vs_sdk_put: { value: upload, goal: 0.9, met: upload >= 0.9 },
      download_through_driver_vs_sdk_get: { value: download, goal: 0.9, met: download >= 0.9 },
      data_prep_s3_vs_file: { value: prep, goal: 0.8, met: prep >= 0.8 },
    },
  };
  process.stdout.write(`${JSON.stringify(result, null, json ? 0 : 2)}\n`);
} finally {
  driver.close();
  sdk.destroy();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
