import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Fastify from 'fastify';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};

/** The locked packages this platform installs (optional binaries for other systems are never fetched), with a Node range. */
function installedEngines(): { name: string; range: string }[] {
  return Object.entries(lock.packages)
    .filter(([path]) => path.startsWith('node_modules/') && existsSync(join(ROOT, path)))
    .flatMap(([path, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return range ? [{ name: path.replace(/^.*node_modules\//, ''), range }] : [];
    });
}

describe('the supported Node versions', () => {
  it('are ones every installed package supports, so npm ci warns of no engine', () => {
    const claimed = pkg.engines.node;
    const locked = installedEngines();
    expect(locked.length).toBeGreaterThan(50);
    const refusing = locked.filter((p) => !semver.subset(claimed, p.range)).map((p) => `${p.name} wants ${p.range}`);
    expect(refusing).toEqual([]);
  });

  it('include the Node running the tests', () => {
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
  });

  it('are the maintained LTS lines: 24 and 22, never 20 (past end of life), which npm ci refuses', () => {
    expect(semver.satisfies('24.0.0', pkg.engines.node)).toBe(true);
    expect(semver.satisfies('22.13.0', pkg.engines.node)).toBe(true);
    expect(semver.satisfies('20.19.5', pkg.engines.node)).toBe(false);
    expect(semver.satisfies('22.12.0', pkg.engines.node)).toBe(false);
    // engine-strict turns npm's EBADENGINE warning into a refusal.
    expect(readFileSync(join(ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
  });

  it('are what the container image runs', () => {
    const dockerfile = readFileSync(join(ROOT, 'infra', 'compose', 'Dockerfile'), 'utf8');
    const majors = [...dockerfile.matchAll(/^FROM node:(\d+)/gm)].map((m) => m[1]!);
    expect(majors.length).toBeGreaterThan(0);
    for (const major of majors) expect(semver.intersects(`${major}.x`, pkg.engines.node), `node:${major}`).toBe(true);
  });
});

describe('the cookie override (package.json overrides: light-my-request uses cookie 1.x)', () => {
  it("keeps Fastify's inject sending cookies", async () => {
    const app = Fastify();
    app.get('/echo', async (req) => ({ cookie: req.headers.cookie ?? null }));
    const res = await app.inject({ method: 'GET', url: '/echo', cookies: { session: 'a b', other: 'x' } });
    await app.close();
    expect(res.json()).toEqual({ cookie: 'session=a%20b; other=x' });
  });
});
