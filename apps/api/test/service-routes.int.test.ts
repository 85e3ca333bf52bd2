import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Api } from '../../../test/support/api.js';

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => api.close());

describe('the signposts and documents of the API', () => {
  it('documents the health, metrics, document and signpost routes too, and every route it serves', async () => {
    const r = await api.call('GET', '/openapi.json');
    for (const path of ['/', '/desk', '/healthz', '/readyz', '/metrics', '/v1/healthz', '/v1/schemas/manifest.json', '/v1/openapi.json']) {
      expect(r.body.paths[path]?.get, path).toBeDefined();
      expect(r.body.paths[path].get.security).toEqual([]);
    }
    expect(r.body.paths['/metrics'].get.responses['200'].content['text/plain']).toBeDefined();
    // Each documented public GET answers.
    for (const [path, ops] of Object.entries<any>(r.body.paths)) {
      if (!ops.get || ops.get.security.length > 0) continue;
      expect((await api.call('GET', path)).status, path).toBe(200);
    }
  });

  it('/ says what this server is and where its documents are', async () => {
    const r = await api.call('GET', '/');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, notice: null, data: { service: 'Itô Training API', openapi: '/v1/openapi.json', manifest_schema: '/v1/schemas/manifest.json' } });
    expect(r.body.data.docs).toMatch(/docs\/contract\.md/);
    for (const link of [r.body.data.openapi, r.body.data.manifest_schema, r.body.data.health, r.body.data.readiness, r.body.data.metrics]) {
      expect((await api.call('GET', link)).status, link).toBe(200);
    }
  });

  it('/desk is a page holding no data, under a strict CSP, with uPlot served from this server', async () => {
    const r = await api.call('GET', '/desk');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(r.body).toContain('<script src="/desk/uplot.js"></script>');
    expect(r.body).not.toMatch(/<script>|https?:\/\//);
    const uplot = await api.call('GET', '/desk/uplot.js');
    expect(uplot.body).toContain('uPlot');
  });

  it('serves the manifest JSON Schema with a description and an example for its fields', async () => {
    const r = await api.call('GET', '/v1/schemas/manifest.json');
    expect(r.status).toBe(200);
    expect(r.body.properties.budget.properties.ceiling_usd).toMatchObject({ description: expect.stringMatching(/US dollars/), examples: [60000] });
    expect(r.body.properties.target.properties.curriculum.description).toMatch(/in the order pretrain → mid_train/);
  });
});
