// @ts-check
/**
 * The modules that carry the project's promises, each with the files Stryker mutates and the test files that
 * must kill those mutants. Tests that run a built entry (test/e2e, *.e2e.test.ts spawning dist/) cannot see a
 * mutant in the sources, so only tests importing the sources are listed.
 */
/**
 * `concurrency`: Stryker processes for a module whose tests mostly wait (on sockets, timers or PostgreSQL) rather
 * than compute; the others use 2, one per core.
 * @type {Record<string, { mutate: string[]; tests: string[]; timeoutMS?: number; concurrency?: number }>}
 */
export const MUTATION_MODULES = {
  'manifest-gate': {
    mutate: ['packages/runs/src/manifest/manifest-gate.ts', 'packages/domain/src/secret-scan.ts', 'packages/domain/src/secrets/detectors.ts'],
    tests: ['packages/domain/test/secret-*.unit.test.ts', 'packages/runs/test/manifest-gate.unit.test.ts', 'apps/api/test/hostile-manifests.int.test.ts'],
  },
  confirmations: {
    mutate: ['packages/domain/src/confirmation/confirmation.ts', 'apps/api/src/services/use-confirmation.ts'],
    tests: ['packages/domain/test/confirmation*.unit.test.ts', 'apps/api/test/train.int.test.ts', 'apps/api/test/hostile-requests.int.test.ts', 'apps/api/test/lifecycle.int.test.ts'],
  },
  'train-gates': {
    mutate: ['apps/api/src/services/train-service.ts'],
    tests: ['apps/api/test/train.int.test.ts'],
  },
  'cli-manifest-and-credentials': {
    mutate: ['apps/cli/src/manifest/read-manifest.ts', 'apps/cli/src/manifest/check-manifest.ts', 'apps/cli/src/credentials/store.ts'],
    tests: ['apps/cli/test/manifest-reader.int.test.ts', 'apps/cli/test/credential-store.int.test.ts'],
  },
  'client-retry-and-polling': {
    mutate: ['packages/client/src/poll.ts', 'packages/client/src/backoff.ts', 'packages/client/src/exchange.ts'],
    tests: ['packages/client/test/*.unit.test.ts', 'packages/client/test/exchange.int.test.ts', 'packages/client/test/client.int.test.ts'],
  },
  'ledger-append-idempotency-verify': {
    // link-rules.ts holds verify's checks and their order (verify.ts pages and joins them).
    mutate: ['packages/ledger/src/append.ts', 'packages/ledger/src/idempotency.ts', 'packages/ledger/src/verify.ts', 'packages/ledger/src/audit/link-rules.ts'],
    tests: [
      'packages/ledger/test/append.int.test.ts',
      'packages/ledger/test/idempotency.int.test.ts',
      'packages/ledger/test/idempotent-transaction.int.test.ts',
      'packages/ledger/test/chain.int.test.ts',
      'packages/ledger/test/chain-tamper.int.test.ts',
      'packages/ledger/test/chain-order.int.test.ts',
      'packages/ledger/test/audit-chain.int.test.ts',
      'packages/ledger/test/verify-since-digest.int.test.ts',
    ],
  },
  'pipeline-orchestrator': {
    mutate: ['packages/domain/src/pipeline/next-commands.ts'],
    // Every pure domain test: the task-report, monitor and SLO tests drive the decider through whole histories.
    tests: ['packages/domain/test/*.unit.test.ts'],
    timeoutMS: 10_000,
  },
  'stage-start': {
    mutate: ['packages/domain/src/pipeline/stage-start.ts', 'packages/domain/src/run/run-over.ts'],
    tests: ['packages/domain/test/stage-start.unit.test.ts', 'packages/domain/test/run-over.unit.test.ts'],
    timeoutMS: 10_000,
  },
  'task-reports': {
    mutate: ['packages/domain/src/run/task-reports.ts'],
    tests: ['packages/domain/test/*.unit.test.ts'],
    timeoutMS: 10_000,
  },
  'monitor-rules': {
    mutate: ['packages/domain/src/monitor/liveness-rules.ts', 'packages/domain/src/monitor/node-failure.ts', 'packages/domain/src/monitor/resume-facts.ts', 'packages/domain/src/monitor/first-step-rules.ts'],
    tests: ['packages/domain/test/monitor*.test.ts', 'packages/domain/test/first-step*.test.ts'],
    timeoutMS: 10_000,
  },
  'dataprep-passes': {
    mutate: [
      'packages/dataprep/src/normalize.ts',
      'packages/dataprep/src/exact-dedup.ts',
      'packages/dataprep/src/hashing.ts',
      'packages/dataprep/src/shingles.ts',
      'packages/dataprep/src/near-dedup.ts',
      'packages/dataprep/src/decontaminate.ts',
    ],
    tests: ['packages/dataprep/test/*.test.ts'],
    timeoutMS: 10_000,
  },
  'telemetry-projections': {
    mutate: ['packages/telemetry/src/run-fold.ts', 'packages/telemetry/src/run-clock.ts', 'packages/telemetry/src/figures.ts', 'packages/telemetry/src/units.ts', 'packages/telemetry/src/segments.ts', 'packages/telemetry/src/causes.ts'],
    // The unit tests alone: with desk-telemetry.int every mutant would start the API on a fresh database and the
    // module alone would take most of the half-hour budget; the unit tests pin every figure the route shows.
    tests: ['packages/telemetry/test/*.unit.test.ts'],
    timeoutMS: 10_000,
  },
  'run-state': {
    mutate: ['packages/domain/src/run/run-state.ts'],
    // Every pure domain test: the deciders' tests fold whole histories through evolveRun.
    tests: ['packages/domain/test/*.unit.test.ts'],
    timeoutMS: 10_000,
  },
  'booking-eligibility': {
    mutate: ['packages/domain/src/booking/booking.ts'],
    tests: ['packages/domain/test/booking.unit.test.ts'],
    timeoutMS: 10_000,
  },
  'planner-refusals': {
    // The request check, the post-training placement, and the lines of planRun and planStage that refuse a plan
    // (the search for a layout between them included); the happy path's arithmetic is pinned by the plan tests.
    mutate: [
      'packages/planner/src/validate.ts',
      'packages/planner/src/post-training.ts',
      'packages/planner/src/plan-run.ts:28-52',
      'packages/planner/src/plan-run.ts:88-97',
      'packages/planner/src/parallelism.ts:119-206',
    ],
    tests: ['packages/planner/test/*.unit.test.ts'],
    timeoutMS: 10_000,
  },
  'rollout-exchange': {
    mutate: ['packages/domain/src/pipeline/rollout-exchange.ts', 'apps/api/src/agent/rollout-service.ts'],
    tests: ['packages/domain/test/rollout-exchange.unit.test.ts', 'apps/api/test/rollout-exchange.int.test.ts'],
  },
  lifecycle: {
    // Cancel, cleanup and restart as the API takes them.
    mutate: ['apps/api/src/services/lifecycle-service.ts'],
    tests: ['apps/api/test/lifecycle.int.test.ts'],
  },
  'cleanup-stage': {
    // The worker's prune and cleanup jobs: checkpoints removed one by one, then the sweep of the run's prefix. Split
    // from lifecycle, whose API tests cannot reach it. Its own test drives both jobs on runs written by hand (a
    // second or two); the pipeline tests that also reach it (file-confinement, s3-run, pipeline-faults) run whole
    // pipelines per mutant and pin nothing it does not.
    mutate: ['apps/worker/src/stages/storage-jobs.ts', 'apps/worker/src/stages/run-prefix-sweep.ts'],
    tests: ['apps/worker/test/storage-jobs.int.test.ts'],
  },
  'storage-confinement': {
    // URI parsing (one URI, one path or key), the drivers' roots and prefixes, the file driver's prefix walk, and
    // removal under a prefix.
    mutate: [
      'packages/storage/src/file-uri.ts',
      'packages/storage/src/s3-uri.ts',
      'packages/storage/src/prefix-removal.ts',
      'packages/storage/src/file-driver.ts:42-45',
      'packages/storage/src/file-driver.ts:155-207',
      'packages/storage/src/s3-driver.ts:88-91',
      'packages/storage/src/s3-driver.ts:209-215',
    ],
    tests: ['packages/storage/test/*.unit.test.ts', 'packages/storage/test/s3-driver.int.test.ts'],
  },
};
