import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Api } from '../../../test/support/api.js';
import { CONTRACT_DOC, code, section, tableRows } from '../../../test/support/contract-doc.js';
import { documentedRoutes } from '../src/http/openapi.js';

let api: Api;
let openapi: Record<string, any>;
beforeAll(async () => {
  api = await startApi();
  openapi = (await api.call('GET', '/v1/openapi.json')).body;
});
afterAll(async () => api.close());

const rows = tableRows(section(CONTRACT_DOC, 'HTTP routes')).map(([method, path, access, availability, what]) => ({
  route: `${method} ${code(path!)}`,
  access: access!,
  availability: availability!,
  what: what!,
}));
const served = () => documentedRoutes(openapi);
/** The access the OpenAPI document states for a route, in the contract's words. */
function accessOf(route: string): string {
  const [method, path] = route.split(' ') as [string, string];
  const description = openapi.paths[path.replace(/:([a-z_]+)/g, '{$1}')][method.toLowerCase()].description as string;
  const stated = /^Access: (.+)\.$/.exec(description)![1]!;
  return stated === 'any credential' ? 'any key' : stated === 'node credential' ? 'node' : stated;
}

describe('docs/contract.md "HTTP routes" and the routes the API serves', () => {
  it('document every served route, and every route documented as served is served', () => {
    expect(served().length).toBeGreaterThanOrEqual(30);
    const documentedServed = rows.filter((r) => r.availability === 'available' || r.availability === 'placeholder').map((r) => r.route);
    expect(new Set(documentedServed).size).toBe(documentedServed.length);
    expect([...documentedServed].sort()).toEqual([...served()].sort());
    for (const r of rows) expect(['available', 'placeholder', 'not yet'], r.route).toContain(r.availability);
  });

  it('state the access each served route demands', () => {
    for (const r of rows.filter((x) => x.availability !== 'not yet')) expect(r.access, r.route).toBe(accessOf(r.route));
  });

  it('mark as not yet exactly the routes that answer not_found for lack of a route', async () => {
    const notYet = rows.filter((r) => r.availability === 'not yet');
    expect(notYet.length).toBeGreaterThanOrEqual(1);
    for (const r of notYet) {
      expect(served(), r.route).not.toContain(r.route);
      const [method, path] = r.route.split(' ') as [string, string];
      const answer = await api.call(method, path.replace(/:([a-z_]+)/g, 'x1'), method === 'POST' ? { body: {} } : {});
      expect(answer.status, r.route).toBe(404);
      expect(answer.body.error.code, r.route).toBe('not_found');
    }
  });
});
