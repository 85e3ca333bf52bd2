export { queueBackendFromEnv, type QueueBackendConfig } from './backend-config.js';
export { createQueueKit, type QueueKit, type QueueKitOptions, type KitWorkerOptions, type AnyQueue, type AnyWorker } from './kit.js';
export {
  defineJobs,
  defineJob,
  type JobCatalog,
  type JobDefinition,
  type JobContext,
  type JobHandlers,
  type JobName,
  type JobInput,
  type JobData,
} from './catalog.js';
export { createJobClient, type JobClient, type JobSnapshot, type JobStatus } from './job-client.js';
export { startJobWorkers, JobTimeoutError, PermanentJobError, type FairShare, type JobWorkerEvents } from './job-workers.js';
export { QueueStoreUnfitError, REQUIRED_EVICTION_POLICY, evictionPolicyOf } from './eviction-policy.js';
export { redisQueueName } from './kit.js';
