import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Api } from '../../../test/support/api.js';
import { documentedRoutes } from '../src/http/openapi.js';
import { renderApiReference, typeOf } from '../src/http/api-reference.js';

const DOC = join(resolve(import.meta.dirname, '..', '..', '..'), 'docs', 'api.md');

let api: Api;
let openapi: Record<string, unknown>;
beforeAll(async () => {
  api = await startApi();
  openapi = (await api.call('GET', '/v1/openapi.json')).body;
});
afterAll(async () => api.close());

describe('docs/api.md, the API reference', () => {
  it('is the rendering of the OpenAPI document the server serves (npm run docs:api writes it)', () => {
    const rendered = renderApiReference(openapi);
    if (process.env.ITO_WRITE_DOCS === '1') writeFileSync(DOC, rendered);
    expect(readFileSync(DOC, 'utf8')).toBe(rendered);
  });

  it('has a section for every served route', () => {
    const routes = documentedRoutes(openapi);
    expect(routes.length).toBeGreaterThanOrEqual(30);
    const doc = readFileSync(DOC, 'utf8');
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      expect(doc, route).toContain(`### \`${method} ${path.replace(/:([a-z_]+)/g, '{$1}')}\``);
    }
  });

  it('states types briefly: bounds, enums, unions and arrays', () => {
    expect(typeOf({ type: 'string', minLength: 1, maxLength: 255 })).toBe('string (1–255 chars)');
    expect(typeOf({ type: 'integer', minimum: 0 })).toBe('integer ≥ 0');
    expect(typeOf({ enum: ['a', 'b'] })).toBe('one of `a`, `b`');
    expect(typeOf({ anyOf: [{ type: 'string' }, { type: 'null' }] })).toBe('string or null');
    expect(typeOf({ type: 'array', items: { type: 'object' }, maxItems: 16 })).toBe('array of object (≤ 16)');
  });
});
