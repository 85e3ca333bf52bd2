import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { EXAMPLE_MANIFEST, seedTenant, startApi, trainConfirmation, type Api } from '../../../test/support/api.js';

/**
 * A client generated from the document the server serves, with openapi-typescript, must type-check a call of
 * `train`, one of `status` and the branch of a refusal (openapi-fetch), and its calls must get the answers the
 * document describes: so neither the document nor the server can change without the other.
 */

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const run = promisify(execFile);

/** The caller's side, written as a user of the generated client would; `@ts-expect-error` lines must fail. */
const CALLER = `
import createClient from 'openapi-fetch';
import type { operations, paths } from './schema.js';

type TrainRefusal = operations['train']['responses'][428]['content']['application/json']['error']['code'];
const required: TrainRefusal = 'confirmation_required';
// @ts-expect-error train's 428 carries confirmation_required and nothing else
const notThere: TrainRefusal = 'not_found';
type StatusNotFound = operations['status']['responses'][404]['content']['application/json']['error']['code'];
const missing: StatusNotFound = 'not_found';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' });

export async function trainThenStatus(bookingId: string, manifest: string, digest: string, ref: string, key: string): Promise<string> {
  const trained = await client.POST('/v1/runs', {
    params: { header: { 'Idempotency-Key': key } },
    body: { booking_id: bookingId, manifest, manifest_digest: digest, confirmation_ref: ref },
  });
  if (trained.error) {
    // The refusal branch: the envelope, its code one of those the document lists for train.
    const ok: false = trained.error.ok;
    const retryable: boolean = trained.error.error.retryable;
    switch (trained.error.error.code) {
      case 'confirmation_required':
      case 'confirmation_pending':
      case 'booking_expired':
      case 'idempotency_key_reused':
        return \`\${String(ok)} \${String(retryable)}\`;
      // @ts-expect-error train never answers a code only the CLI raises
      case 'manifest_symlink':
        return 'never';
      default:
        return trained.error.error.code;
    }
  }
  const created: true = trained.data.ok;
  const status = await client.GET('/v1/runs/{id}', { params: { path: { id: 'run_0' } } });
  if (status.error) return status.error.error.code;
  return \`\${String(created)} \${JSON.stringify(status.data.data)}\`;
}

export async function wrongCalls(): Promise<void> {
  // @ts-expect-error train needs its Idempotency-Key header
  await client.POST('/v1/runs', { body: { booking_id: 'b', manifest: 'm', manifest_digest: 'd' } });
  // @ts-expect-error status needs the run id
  await client.GET('/v1/runs/{id}', {});
  void required; void notThere; void missing;
}
`;

const TSCONFIG = {
  compilerOptions: { target: 'ES2022', lib: ['ES2023', 'DOM'], module: 'ESNext', moduleResolution: 'Bundler', strict: true, noEmit: true, skipLibCheck: true, types: [] },
  files: ['schema.ts', 'caller.ts'],
};

/** Generates the client's types from `doc` in a scratch directory and type-checks the caller; tsc's output. */
async function typeCheck(doc: Record<string, unknown>): Promise<{ ok: boolean; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'ito-openapi-client-'));
  try {
    writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(doc as never)));
    writeFileSync(join(dir, 'caller.ts'), CALLER);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    // The caller resolves openapi-fetch (and its types) from the repository's own modules.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    try {
      const r = await run(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir });
      return { ok: true, output: r.stdout };
    } catch (err) {
      return { ok: false, output: String((err as { stdout?: string }).stdout ?? err) };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Responses = Record<string, { content?: Record<string, { schema?: { allOf?: Array<{ properties?: { error?: { properties?: { code?: { enum?: string[] } } } } }> } }> }>;

/** The answer is one the document lists for the operation: its status, and for a refusal its code at that status. */
function expectDocumented(doc: Record<string, unknown>, method: string, path: string, answer: { status: number; body: { ok: boolean; error?: { code: string } } }) {
  const responses = (doc.paths as Record<string, Record<string, { responses: Responses }>>)[path]![method]!.responses;
  const response = responses[String(answer.status)];
  expect(response, `${method.toUpperCase()} ${path} answered ${answer.status}, which its document does not list`).toBeDefined();
  if (!answer.body.ok) expect(response!.content!['application/json']!.schema!.allOf![1]!.properties!.error!.properties!.code!.enum).toContain(answer.body.error!.code);
}

let api: Api;
let doc: Record<string, unknown>;
beforeAll(async () => {
  api = await startApi();
  doc = (await api.call('GET', '/v1/openapi.json')).body;
});
afterAll(async () => api.close());

describe('a client generated from the served OpenAPI document', () => {
  it('type-checks train, status and a refusal branch, and refuses the wrong calls', async () => {
    const checked = await typeCheck(doc);
    expect(checked.output).toBe('');
    expect(checked.ok).toBe(true);
  }, 120_000);

  it('stops type-checking when the document loses what the caller relies on', async () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    delete broken.paths['/v1/runs']!.post!.responses['428'];
    const checked = await typeCheck(broken as unknown as Record<string, unknown>);
    expect(checked.ok).toBe(false);
    expect(checked.output).toMatch(/caller\.ts/);
  }, 120_000);

  it('gets from the server the answers the document describes for train, status and a refusal', async () => {
    const seed = await seedTenant(api);
    const client = createClient<any>({ baseUrl: api.url });
    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    const body = { booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: manifestDigest(EXAMPLE_MANIFEST) };

    const refused = await client.POST('/v1/runs', { params: { header: { 'Idempotency-Key': 'client-no-ref' } }, headers: auth(seed.requester), body });
    expect(refused.response.status).toBe(428);
    expect(refused.error.error.code).toBe('confirmation_required');
    expectDocumented(doc, 'post', '/v1/runs', { status: 428, body: refused.error });
    expect((await api.call('GET', '/v1/runs', { key: seed.requester })).body.data.runs).toEqual([]);

    const ref = await trainConfirmation(api, seed);
    const trained = await client.POST('/v1/runs', {
      params: { header: { 'Idempotency-Key': 'client-train' } },
      headers: auth(seed.requester),
      body: { ...body, confirmation_ref: ref },
    });
    expect(trained.response.status).toBe(201);
    expectDocumented(doc, 'post', '/v1/runs', { status: 201, body: trained.data });

    const status = await client.GET('/v1/runs/{id}', { params: { path: { id: trained.data.data.run_id } }, headers: auth(seed.requester) });
    expect(status.response.status).toBe(200);
    expect(status.data.data.state).toBeTypeOf('string');
    expectDocumented(doc, 'get', '/v1/runs/{id}', { status: 200, body: status.data });

    const unknown = await client.GET('/v1/runs/{id}', { params: { path: { id: `run_${'0'.repeat(32)}` } }, headers: auth(seed.requester) });
    expect(unknown.error.error.code).toBe('not_found');
    expectDocumented(doc, 'get', '/v1/runs/{id}', { status: unknown.response.status, body: unknown.error });

    const anonymous = await client.GET('/v1/runs/{id}', { params: { path: { id: trained.data.data.run_id } } });
    expectDocumented(doc, 'get', '/v1/runs/{id}', { status: anonymous.response.status, body: anonymous.error });
  });
});
