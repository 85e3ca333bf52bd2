import { resolve } from 'node:path';
import { loadConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Api } from '../../../test/support/api.js';

const CONFIG = resolve(import.meta.dirname, '..', 'redocly.yaml');

let api: Api;
let served: string;
beforeAll(async () => {
  api = await startApi();
  const r = await fetch(`${api.url}/v1/openapi.json`);
  served = await r.text();
});
afterAll(async () => api.close());

describe('the served OpenAPI document, linted with the recommended rules (apps/api/redocly.yaml)', () => {
  it('has no problem at all, warnings included', async () => {
    const config = await loadConfig({ configPath: CONFIG });
    const problems = await lintFromString({ source: served, absoluteRef: `${api.url}/v1/openapi.json`, config });
    const described = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
    expect(described).toEqual([]);
  });

  it('documents a 4xx answer for every operation but the probes (in place of operation-4xx-response)', () => {
    // /metrics is no probe here: it admits scrapes a few at a time and answers rate_limited past that.
    const probes = new Set(['/healthz', '/readyz', '/v1/healthz', '/v1/readyz']);
    const paths = JSON.parse(served).paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    const without = Object.entries(paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !Object.keys(op.responses).some((s) => /^4\d\d$/.test(s)))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(without.sort()).toEqual([...probes].map((p) => `GET ${p}`).sort());
  });
});
