import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { envSchema } from '@ito/config';

/**
 * No image registry is reachable where the tests run, so the compose file and the Kubernetes manifests cannot be
 * started here: these tests hold them to the topology instead (roles, probes, a Redis that never evicts,
 * configuration from a Secret, no credential written down).
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/* eslint-disable @typescript-eslint/no-explicit-any -- parsed YAML is walked as data. */
type Doc = Record<string, any>;

/** The variables that carry credentials: they may only come from a Secret or be interpolated at deploy time. */
const SECRET_VARIABLES = ['ITO_DATABASE_URL', 'ITO_REDIS_URL', 'ITO_API_KEY', 'ITO_NODE_CREDENTIAL', 'POSTGRES_PASSWORD'];
const KNOWN_VARIABLES = new Set(Object.keys(envSchema.shape));
const ROLE_SERVICES = { api: 'api', worker: 'worker', monitor: 'monitor' } as const;

/** A URL's password, if it names one that is not a `${VARIABLE}` interpolation. */
function literalPassword(value: string): string | null {
  const withoutInterpolation = value.replace(/\$\{[A-Z_]+(:?[?-][^}]*)?\}/g, '');
  const m = /^[a-z+]+:\/\/[^/@:]*:([^@]+)@/.exec(withoutInterpolation);
  return m ? m[1]! : null;
}

describe('infra/compose/compose.yaml', () => {
  const text = read('infra/compose/compose.yaml');
  const compose = parse(text, { merge: true }) as Doc;
  const services = compose.services as Record<string, Doc>;

  it('has PostgreSQL, Redis, a migrate job, two API replicas, workers and a monitor', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'monitor', 'postgres', 'redis', 'worker']);
    for (const [service, role] of Object.entries(ROLE_SERVICES)) {
      expect(services[service]!.command, service).toEqual(['start', '--role', role]);
      expect(services[service]!.depends_on.migrate.condition, service).toBe('service_completed_successfully');
      expect(services[service]!.depends_on.redis.condition, service).toBe('service_healthy');
    }
    expect(services.api!.deploy.replicas).toBe(2);
    expect(services.worker!.deploy.replicas).toBeGreaterThanOrEqual(2);
    expect(services.monitor!.deploy.replicas).toBe(1);
    expect(services.migrate!.command).toEqual(['migrate']);
    expect(services.migrate!.depends_on.postgres.condition).toBe('service_healthy');
  });

  it('runs Redis with maxmemory-policy noeviction and AOF on a volume', () => {
    const command = (services.redis!.command as string[]).join(' ');
    expect(command).toMatch(/--maxmemory-policy noeviction\b/);
    expect(command).toMatch(/--appendonly yes\b/);
    expect(services.redis!.volumes).toContain('redisdata:/data');
  });

  it('checks the API replicas on /readyz, listens on all interfaces and publishes one host port each', () => {
    expect(services.api!.healthcheck.test.join(' ')).toContain('/readyz');
    expect(services.api!.environment.ITO_HOST).toBe('0.0.0.0');
    expect(services.api!.ports).toEqual(['127.0.0.1:8420-8421:8420']);
    // Only the API is reachable from outside.
    for (const name of ['postgres', 'redis', 'worker', 'monitor', 'migrate']) expect(services[name]!.ports, name).toBeUndefined();
  });

  it('configures the roles only with variables ito-server reads, and writes no credential down', () => {
    for (const name of ['migrate', 'api', 'worker', 'monitor']) {
      const env = services[name]!.environment as Record<string, string>;
      for (const key of Object.keys(env)) expect(KNOWN_VARIABLES.has(key), `${name}: ${key}`).toBe(true);
      expect(env.ITO_DATABASE_URL, name).toMatch(/\$\{ITO_DB_PASSWORD:\?[^}]+\}/);
      for (const key of SECRET_VARIABLES) if (env[key]) expect(literalPassword(env[key]), `${name}: ${key}`).toBeNull();
    }
    expect(services.postgres!.environment.POSTGRES_PASSWORD).toMatch(/^\$\{ITO_DB_PASSWORD(:\?[^}]+)?\}$/);
    expect(text).not.toMatch(/ito_(sk|nc)_/);
  });
});

describe('infra/k8s', () => {
  const kustomization = parse(read('infra/k8s/kustomization.yaml')) as Doc;
  const texts = (kustomization.resources as string[]).map((file) => read(join('infra/k8s', file)));
  const objects = texts.flatMap((t) => parseAllDocuments(t).map((d) => d.toJS() as Doc));
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const named = (kind: string, name: string) => {
    const found = byKind(kind).find((o) => o.metadata.name === name);
    if (!found) throw new Error(`no ${kind} ${name}`);
    return found;
  };
  const podSpecs = () => [...byKind('Deployment'), ...byKind('Job')].map((o) => ({ name: o.metadata.name as string, spec: o.spec.template.spec as Doc }));

  it('has a Deployment per role and a migrate Job', () => {
    expect(byKind('Deployment').map((d) => d.metadata.name).sort()).toEqual(['ito-api', 'ito-monitor', 'ito-worker']);
    for (const role of Object.keys(ROLE_SERVICES)) {
      const container = named('Deployment', `ito-${role}`).spec.template.spec.containers[0];
      expect(container.args, role).toEqual(['start', '--role', role]);
    }
    expect(named('Deployment', 'ito-api').spec.replicas).toBeGreaterThanOrEqual(2);
    expect(named('Deployment', 'ito-worker').spec.replicas).toBeGreaterThanOrEqual(2);
    expect(named('Job', 'ito-migrate').spec.template.spec.containers[0].args).toEqual(['migrate']);
  });

  it('probes the API on /readyz and /healthz, and the Service reaches the port it probes', () => {
    const api = named('Deployment', 'ito-api');
    const container = api.spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    const port = container.ports.find((p: Doc) => p.name === container.readinessProbe.httpGet.port);
    expect(port.containerPort).toBe(Number(container.env.find((e: Doc) => e.name === 'ITO_PORT').value));
    const service = named('Service', 'ito-api');
    expect(service.spec.selector).toEqual(api.spec.template.metadata.labels);
    expect(service.spec.ports[0].targetPort).toBe(port.name);
  });

  it('takes credentials from the Secret ito-server only, and everything else from variables ito-server reads', () => {
    expect(byKind('Secret')).toEqual([]);
    for (const { name, spec } of podSpecs()) {
      for (const container of spec.containers as Doc[]) {
        expect(container.envFrom.map((e: Doc) => e.secretRef?.name).filter(Boolean), name).toEqual(['ito-server']);
        for (const e of (container.env ?? []) as Doc[]) {
          expect(KNOWN_VARIABLES.has(e.name), `${name}: ${e.name}`).toBe(true);
          expect(SECRET_VARIABLES, `${name}: ${e.name} must come from the Secret`).not.toContain(e.name);
        }
        expect(container.securityContext.allowPrivilegeEscalation, name).toBe(false);
      }
      expect(spec.securityContext.runAsNonRoot, name).toBe(true);
    }
    const config = named('ConfigMap', 'ito-config').data as Record<string, string>;
    for (const key of Object.keys(config)) {
      expect(KNOWN_VARIABLES.has(key), key).toBe(true);
      expect(SECRET_VARIABLES, key).not.toContain(key);
    }
    for (const t of texts) expect(t).not.toMatch(/ito_(sk|nc)_|:\/\/[^/\s@:]+:[^@\s]+@/);
  });

  it('gives every role the drain time ito-server needs on SIGTERM (30 s)', () => {
    for (const d of byKind('Deployment')) expect(d.spec.template.spec.terminationGracePeriodSeconds, d.metadata.name).toBeGreaterThan(30);
  });
});
