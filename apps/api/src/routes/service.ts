import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { manifestJsonSchema, ok } from '@ito/contracts';
import { DASHBOARD_CSP, DASHBOARD_CSS, DASHBOARD_HTML } from '../desk/dashboard-page.js';
import { DASHBOARD_JS } from '../desk/dashboard-script.js';
import type { PlainRoute } from '../http/openapi.js';

const OPENAPI = '/v1/openapi.json';
const MANIFEST_SCHEMA = '/v1/schemas/manifest.json';

/** The documents and signposts of the API, as OpenAPI describes them. */
export const SERVICE_ROUTES: PlainRoute[] = [
  { method: 'GET', url: '/', summary: 'What this server is and where its documents are.', response: 'envelope' },
  { method: 'GET', url: '/desk', summary: 'The pricing desk dashboard: a public page holding no data; it reads /v1/desk/telemetry with the desk credential the analyst enters.', response: 'html' },
  { method: 'GET', url: '/desk/dashboard.js', summary: "The dashboard's script.", response: 'asset' },
  { method: 'GET', url: '/desk/dashboard.css', summary: "The dashboard's styles.", response: 'asset' },
  { method: 'GET', url: '/desk/uplot.js', summary: 'The uPlot charting library, bundled from the server\'s own packages (no CDN).', response: 'asset' },
  { method: 'GET', url: '/desk/uplot.css', summary: "uPlot's styles.", response: 'asset' },
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

  registerDeskPage(app);

  app.get(OPENAPI, async () => openapi);
  app.get('/openapi.json', async () => openapi);
  // For editors and reviewers: the same zod schema the server validates with.
  const manifestSchema = manifestJsonSchema();
  app.get(MANIFEST_SCHEMA, async () => manifestSchema);
}

const require = createRequire(import.meta.url);
const UPLOT_JS = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
const UPLOT_CSS = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');

/** The dashboard and its assets: static, public, under a CSP that lets the page load only this server's files. */
function registerDeskPage(app: FastifyInstance): void {
  const send = (reply: FastifyReply, type: string, body: string) =>
    reply
      .header('content-type', type)
      .header('content-security-policy', DASHBOARD_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
      .send(body);
  app.get('/desk', async (_req, reply) => send(reply, 'text/html; charset=utf-8', DASHBOARD_HTML));
  app.get('/desk/dashboard.js', async (_req, reply) => send(reply, 'text/javascript; charset=utf-8', DASHBOARD_JS));
  app.get('/desk/dashboard.css', async (_req, reply) => send(reply, 'text/css; charset=utf-8', DASHBOARD_CSS));
  app.get('/desk/uplot.js', async (_req, reply) => send(reply, 'text/javascript; charset=utf-8', UPLOT_JS));
  app.get('/desk/uplot.css', async (_req, reply) => send(reply, 'text/css; charset=utf-8', UPLOT_CSS));
}
