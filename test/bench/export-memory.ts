/**
 * The auditor's CLI at the bench's ledger size, for bench:replay's memory goal: `ito audit verify` (the CLI paging
 * the tenant's events and links from `ito-server start --role api`, a child process on the bench's database, and
 * walking the chain to the signed digest), `ito audit export` (the same pages written to a file) and `ito audit
 * verify --export` (that file checked offline against the signed digest's public key).
 * Each CLI run is a process of its own; its peak RSS is its `VmHWM` (the kernel's high-water mark), read every
 * 50 ms while it runs, and the server's is read once the export is written (its start-up included).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { startChildServer } from './child-server.js';

export interface ExportMemory {
  online_verify_seconds: number;
  online_verify_ok: boolean;
  online_verified_events: number;
  cli_online_verify_peak_rss_mib: number;
  records: number;
  mib: number;
  export_seconds: number;
  offline_verify_seconds: number;
  offline_verify_ok: boolean;
  cli_export_peak_rss_mib: number;
  cli_offline_verify_peak_rss_mib: number;
  server_peak_rss_mib: number;
}

const CLI = new URL('../../apps/cli/bin/ito.js', import.meta.url).pathname;
const round = (n: number) => Math.round(n * 10) / 10;

/** The high-water mark of a live process's resident set, in MiB; null once it is gone. */
function highWaterMib(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Runs the CLI to its end; its JSON answer and its peak RSS. Throws on a non-zero exit. */
async function cli(args: string[], env: Record<string, string>): Promise<{ answer: any; peakMib: number; seconds: number }> {
  const start = performance.now();
  const child = spawn(process.execPath, [CLI, ...args, '--json'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, highWaterMib(child.pid!) ?? 0);
  }, 50);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`ito ${args[0]} ${args[1]} exited ${code}: ${err.slice(0, 500)} ${out.slice(0, 500)}`);
  return { answer: JSON.parse(out), peakMib: round(peak), seconds: (performance.now() - start) / 1000 };
}

/**
 * `auditorKeys`: one key for the online verify and one for the export, so each command has a credential's whole
 * request budget (the CLI would wait out the rate limit otherwise, and its waits are not what is measured).
 */
export async function measureExportMemory(opts: { databaseUrl: string; auditorKeys: [string, string]; publicKey: KeyObject }): Promise<ExportMemory> {
  const dir = mkdtempSync(join(tmpdir(), 'ito-bench-export-'));
  const server = await startChildServer({ databaseUrl: opts.databaseUrl, roles: ['api'] });
  try {
    const keyFile = join(dir, 'audit-signing.pub');
    writeFileSync(keyFile, opts.publicKey.export({ type: 'spki', format: 'pem' }));
    const env = (key: string) => ({ ITO_API_URL: server.url, ITO_API_KEY: key, ITO_HOME: join(dir, 'home') });
    const online = await cli(['audit', 'verify', '--public-key', keyFile], env(opts.auditorKeys[0]));
    const file = join(dir, 'ledger-export.jsonl');
    const exported = await cli(['audit', 'export', '--out', file], env(opts.auditorKeys[1]));
    const serverPeak = highWaterMib(server.pid) ?? 0;
    const verified = await cli(['audit', 'verify', '--export', file, '--public-key', keyFile], { ITO_HOME: join(dir, 'home') });
    return {
      online_verify_seconds: round(online.seconds),
      online_verify_ok: online.answer.ok === true && online.answer.data?.verified === true,
      online_verified_events: online.answer.data?.checked ?? 0,
      cli_online_verify_peak_rss_mib: online.peakMib,
      records: exported.answer.data.records,
      mib: round(statSync(file).size / 1024 / 1024),
      export_seconds: round(exported.seconds),
      offline_verify_seconds: round(verified.seconds),
      offline_verify_ok: verified.answer.ok === true && verified.answer.data?.verified === true,
      cli_export_peak_rss_mib: exported.peakMib,
      cli_offline_verify_peak_rss_mib: verified.peakMib,
      server_peak_rss_mib: round(serverPeak),
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
