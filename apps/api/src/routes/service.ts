import type { FastifyInstance } from 'fastify';
import { fail, manifestJsonSchema, ok } from '@ito/contracts';
import type { PlainRoute } from '../http/openapi.js';

const OPENAPI = '/v1/openapi.json';
const MANIFEST_SCHEMA = '/v1/schemas/manifest.json';

/** The documents and signposts of the API, as OpenAPI describes them. */
export const SERVICE_ROUTES: PlainRoute[] = [
  { method: 'GET', url: '/', summary: 'What this server is and where its documents are.', response: 'envelope' },
  { method: 'GET', url: '/desk', summary: 'The pricing desk dashboard: not available yet; answers not_found saying so.', response: 'envelope' },
  { method: 'GET', url: OPENAPI, summary: 'This OpenAPI 3.1 document.', response: 'json' },
  { method: 'GET', url: '/openapi.json', summary: 'This OpenAPI 3.1 document, at the root.', response: 'json' },
  { method: 'GET', url: MANIFEST_SCHEMA, summary: "The training manifest's JSON Schema, from the zod schema the server validates with.", response: 'json' },
];

/** Registers `/`, `/desk`, the OpenAPI document and the manifest's JSON Schema. */
export function registerServiceRoutes(app: FastifyInstance, openapi: Record<string, unknown>, version: string): void {
  const index = ok({
    service: 'Itô Training API',
    version,
    description: 'The control plane that turns a reviewed training manifest into a run on booked GPU nodes, through fail-closed gates.',
    docs: 'docs/contract.md (the public contract) and docs/design.md in the repository',
    openapi: OPENAPI,
    manifest_schema: MANIFEST_SCHEMA,
    api_prefix: '/v1',
    health: '/healthz',
    readiness: '/readyz',
    metrics: '/metrics',
  });
  app.get('/', async () => index);

  // Honest until the dashboard lands: the page does not exist yet, and says so instead of a bare 404.
  const desk = fail('not_found', 'the desk dashboard is not available yet; see / for what this server offers', { details: { available: false } });
  app.get('/desk', async (_req, reply) => reply.code(404).send(desk));

  app.get(OPENAPI, async () => openapi);
  app.get('/openapi.json', async () => openapi);
  // For editors and reviewers: the same zod schema the server validates with.
  const manifestSchema = manifestJsonSchema();
  app.get(MANIFEST_SCHEMA, async () => manifestSchema);
}
