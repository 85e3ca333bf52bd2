import { defineConfig } from 'drizzle-kit';

/** Migrations are generated from the schema modules into infra/migrations and never edited once they land. */
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./packages/ledger/src/schema.ts', './packages/runs/src/schema.ts', './packages/runs/src/telemetry-schema.ts'],
  out: './infra/migrations',
  strict: true,
  verbose: true,
});
