import { open, rm, type FileHandle } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { waitOutRateLimit, type ItoApi } from '@ito/client';
import { AUDIT_EVENTS_PAGE_MAX, fail, ok, type Envelope } from '@ito/contracts';
import {
  EXPORT_FORMAT,
  TenantChainWalker,
  anchoredStart,
  exportHeaderLine,
  exportRecordLine,
  exportTrailerLine,
  rootFromProof,
  schemaVersionsOf,
  verifyDigestSignature,
  type AuditRecord,
  type ExportAnchor,
  type ProofStep,
  type SignedDigest,
} from '@ito/ledger/audit';
import { renderAuditVerdict } from '../human/audit-views.js';
import { columnsOf, keyValue, table } from '../human/format.js';
import { usageOutcome, type Outcome } from '../output.js';
import { readPublicKey, verifyExportFile } from './audit-files.js';
import { flag, switchOn, type Handler } from './handler.js';

/** Bounds the paging so a misbehaving server cannot keep us looping forever. */
const MAX_PAGES = 1_000_000;
/** The server's largest page: a long chain in the fewest requests of the credential's budget. */
const PAGE = AUDIT_EVENTS_PAGE_MAX;

interface DigestAnswer {
  tenant_id: string;
  head: { tenant_seq: number; hash: string } | null;
  published: SignedDigest | null;
  anchor: { leaf: { tenant_seq: number; hash: string }; proof: ProofStep[] } | null;
}

/** Pages through the tenant's records in order (after tenant sequence `from`), handing each page to `onPage`. */
async function eachPage(api: ItoApi, onPage: (records: AuditRecord[]) => Promise<boolean> | boolean, from = 0): Promise<Envelope<null>> {
  let after = from;
  for (let page = 0; page < MAX_PAGES; page++) {
    // A long chain is many pages: past the credential's request budget the server says how long to wait.
    const answer = await waitOutRateLimit(() => api.auditEvents({ after, limit: PAGE }));
    if (!answer.ok) return answer;
    const records = (answer.data.records ?? []) as AuditRecord[];
    if (!(await onPage(records))) return ok(null);
    const next = answer.data.next_after;
    if (typeof next !== 'number' || next <= after) return ok(null);
    after = next;
  }
  return ok(null);
}

const verificationFailed = (reason: string, details: Record<string, unknown>, liveApiContacted: boolean): Outcome => ({
  envelope: fail('audit_verification_failed', reason, { details, liveApiContacted }),
});

async function publicKeyFlag(path: string | undefined): Promise<KeyObject | null | Outcome> {
  if (path === undefined) return null;
  if (!isAbsolute(path)) return usageOutcome('--public-key needs an absolute path');
  try {
    return await readPublicKey(path);
  } catch {
    return usageOutcome('--public-key is not a readable Ed25519 public key (PEM)');
  }
}

const isOutcome = (v: unknown): v is Outcome => typeof v === 'object' && v !== null && 'envelope' in v;

export const auditVerifyCommand: Handler = async (cmd, ctx) => {
  const key = await publicKeyFlag(flag(cmd, 'public-key'));
  if (isOutcome(key)) return key;
  const file = flag(cmd, 'export');
  if (file !== undefined && switchOn(cmd, 'since-digest')) return usageOutcome('--since-digest walks the server\'s chain from its last digest; an export file is verified whole, without it');
  if (file !== undefined) return verifyExport(file, key);

  const api = await ctx.api();
  const digestAnswer = await waitOutRateLimit(() => api.auditDigest());
  if (!digestAnswer.ok) return { envelope: digestAnswer };
  const digest = digestAnswer.data as unknown as DigestAnswer;
  if (switchOn(cmd, 'since-digest')) return verifySinceDigest(api, digest, key);
  const keep = [digest.head?.tenant_seq, digest.anchor?.leaf.tenant_seq].filter((n): n is number => typeof n === 'number');
  const walker = new TenantChainWalker(digest.tenant_id, new Set(keep));
  const paged = await eachPage(api, (records) => records.every((r) => walker.push(r)) && records.length > 0);
  if (!paged.ok) return { envelope: paged };
  const chain = walker.verdict();
  if (!chain.ok) return verificationFailed(chain.reason, { first_bad_position: chain.first_bad_position, checked: chain.checked }, true);
  if (digest.head && walker.hashAt(digest.head.tenant_seq) !== digest.head.hash) {
    return verificationFailed('the chain the server serves does not lead to the head it names', { checked: chain.checked }, true);
  }
  const anchor = checkAnchor(digest.tenant_id, digest.published, digest.anchor, walker, key);
  if (typeof anchor !== 'string') return verificationFailed(anchor.reason, { checked: chain.checked }, true);
  return {
    envelope: ok({ tenant_id: digest.tenant_id, verified: true, checked: chain.checked, head: chain.head, anchor, anchored_digest: digest.published?.digest ?? null }),
    human: renderAuditVerdict,
  };
};

/**
 * The walk from the tenant's leaf under the last signed digest: the leaf is shown to be under the digest (its
 * path reaches the signed root; with a key, the signature verifies), then only the records after it are fetched
 * and walked, so the cost follows what was appended since. Without a digest covering the tenant there is no
 * leaf to start from: every record is walked (with a key that is a failure, as it is for the full verify).
 */
async function verifySinceDigest(api: ItoApi, digest: DigestAnswer, key: KeyObject | null): Promise<Outcome> {
  if (key && (!digest.published || !digest.anchor)) return verificationFailed('the server has published no signed digest that covers this tenant', { checked: 0 }, true);
  const start = digest.published ? anchoredStart(digest.tenant_id, digest.published, digest.anchor, key) : { from: null };
  if ('reason' in start) return verificationFailed(start.reason, { checked: 0 }, true);
  const keep = typeof digest.head?.tenant_seq === 'number' ? [digest.head.tenant_seq] : [];
  const walker = new TenantChainWalker(digest.tenant_id, new Set(keep), start.from);
  const paged = await eachPage(api, (records) => records.every((r) => walker.push(r)) && records.length > 0, start.from?.tenant_seq ?? 0);
  if (!paged.ok) return { envelope: paged };
  const chain = walker.verdict();
  if (!chain.ok) return verificationFailed(chain.reason, { first_bad_position: chain.first_bad_position, checked: chain.checked }, true);
  if (digest.head && walker.hashAt(digest.head.tenant_seq) !== digest.head.hash) {
    return verificationFailed('the chain the server serves does not lead to the head it names', { checked: chain.checked }, true);
  }
  const anchor = !digest.published || !digest.anchor ? 'none' : key ? 'signature_verified' : 'unsigned_anchor';
  return {
    envelope: ok({
      tenant_id: digest.tenant_id,
      verified: true,
      checked: chain.checked,
      head: chain.head,
      anchor,
      anchored_digest: digest.published?.digest ?? null,
      since: { digest_seq: digest.published?.digest.seq ?? null, tenant_seq: start.from?.tenant_seq ?? 0 },
    }),
    human: renderAuditVerdict,
  };
}

function checkAnchor(
  tenantId: string,
  published: SignedDigest | null,
  anchor: DigestAnswer['anchor'],
  walker: TenantChainWalker,
  key: KeyObject | null,
): 'signature_verified' | 'unsigned_anchor' | 'none' | { reason: string } {
  if (!published || !anchor) return key ? { reason: 'the server has published no signed digest that covers this tenant' } : 'none';
  if (walker.hashAt(anchor.leaf.tenant_seq) !== anchor.leaf.hash) return { reason: `the chain does not lead to the anchored link ${anchor.leaf.tenant_seq}` };
  const root = rootFromProof({ tenantId, tenantSeq: anchor.leaf.tenant_seq, hash: anchor.leaf.hash }, anchor.proof);
  if (root !== published.digest.tenants_root) return { reason: "the anchor's path does not reach the published digest's root" };
  if (!key) return 'unsigned_anchor';
  return verifyDigestSignature(published, key) ? 'signature_verified' : { reason: "the published digest's signature does not verify with the given public key" };
}

async function verifyExport(file: string, key: KeyObject | null): Promise<Outcome> {
  if (!isAbsolute(file)) return usageOutcome('--export needs an absolute path');
  let verdict;
  try {
    verdict = await verifyExportFile(file, key);
  } catch {
    return usageOutcome('the export file cannot be read');
  }
  if (!verdict.ok) return verificationFailed(verdict.reason, { first_bad_position: verdict.first_bad_position, line: verdict.line, checked: verdict.checked }, false);
  return { envelope: ok({ ...verdict, verified: true, file }, { liveApiContacted: false }), human: renderAuditVerdict };
}

/** What to do about an --out path the export cannot create, by the reason the filesystem gave. */
const OUT_PROBLEMS: Record<string, string> = {
  EEXIST: '--out names a file that already exists; an export never overwrites one: choose a new path',
  ENOENT: "--out's directory does not exist; create it first or choose another path",
  ENOTDIR: "--out's parent is not a directory; choose a path inside a directory",
  EISDIR: '--out names a directory; give the path of a new file inside it',
  EACCES: "--out's directory is not writable by this user; choose a directory you can write",
  EPERM: "--out's directory is not writable by this user; choose a directory you can write",
  EROFS: "--out's file system is read-only; choose another path",
};

async function createExportFile(out: string): Promise<{ handle: FileHandle } | Outcome> {
  try {
    return { handle: await open(out, 'wx', 0o600) };
  } catch (err) {
    const problem = OUT_PROBLEMS[(err as NodeJS.ErrnoException).code ?? ''];
    if (problem) return usageOutcome(problem);
    throw err;
  }
}

export const auditExportCommand: Handler = async (cmd, ctx) => {
  const out = flag(cmd, 'out')!;
  if (!isAbsolute(out)) return usageOutcome('--out needs an absolute path');
  // Created new, private to the auditor, before the server is asked anything: a path that cannot take a new file
  // is the caller's to fix, and no retry would. A failure part way removes it, so no cut-short export is left.
  const opened = await createExportFile(out);
  if ('envelope' in opened) return opened;
  const { handle } = opened;
  let complete = false;
  try {
    const api = await ctx.api();
    const digestAnswer = await waitOutRateLimit(() => api.auditDigest());
    if (!digestAnswer.ok) return { envelope: digestAnswer };
    const digest = digestAnswer.data as unknown as DigestAnswer;
    const anchor: ExportAnchor | null = digest.published && digest.anchor ? { signed: digest.published, ...digest.anchor } : null;
    await handle.write(`${exportHeaderLine({ format: EXPORT_FORMAT, tenant_id: digest.tenant_id, exported_at: new Date().toISOString(), anchor })}\n`);
    let count = 0;
    let head: { tenant_seq: number; hash: string } | null = null;
    const versions: Record<string, number[]> = {};
    const paged = await eachPage(api, async (records) => {
      if (records.length === 0) return false;
      await handle.write(records.map((r) => `${exportRecordLine(r)}\n`).join(''));
      schemaVersionsOf(records, versions);
      count += records.length;
      const last = records[records.length - 1]!;
      head = { tenant_seq: last.tenant_seq, hash: last.hash };
      return true;
    });
    if (!paged.ok) return { envelope: paged };
    await handle.write(`${exportTrailerLine({ end: true, count, head, schema_versions: versions })}\n`);
    complete = true;
    return {
      envelope: ok({ out, tenant_id: digest.tenant_id, records: count, head, anchored: anchor !== null, schema_versions: versions }),
      human: (d) => `wrote ${String(d.records)} records of tenant ${String(d.tenant_id)} to ${String(d.out)}\n`,
    };
  } finally {
    await handle.close();
    if (!complete) await rm(out, { force: true });
  }
};

export const auditReplayCommand: Handler = async (cmd, ctx) => {
  const asOf = flag(cmd, 'as-of');
  if (asOf !== undefined && !/^(\d{1,15}|\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d))$/.test(asOf)) {
    return usageOutcome('--as-of must be a ledger position or an ISO 8601 instant with an offset');
  }
  const answer = await (await ctx.api()).auditReplay({ as_of: asOf, run_id: flag(cmd, 'run') });
  return {
    envelope: answer,
    human: (d: Record<string, unknown>) => {
      const rows = (Array.isArray(d.differences) ? d.differences : d.runs) as Record<string, unknown>[] | undefined;
      const head = keyValue(Object.fromEntries(Object.entries(d).filter(([k]) => !['differences', 'runs', 'tasks'].includes(k))));
      if (!rows || rows.length === 0) return head;
      const cols = Array.isArray(d.differences) ? ['table', 'run_id', 'field', 'live', 'replayed'] : ['run_id', 'state', 'stage', 'version', 'updated_at'];
      return head + table(rows, columnsOf(rows, cols));
    },
  };
};
