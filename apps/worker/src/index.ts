export { pipelineJobs, type PipelineJobs } from './jobs/catalog.js';
export { pipelineHandlers } from './jobs/handlers.js';
export { createRunEvaluator, orchestratorProjection, startRelay, ORCHESTRATOR_PROJECTION, ORCHESTRATED_EVENT_TYPES, type Relay, type RunEvaluator } from './orchestrator/relay.js';
export { enqueueCommand } from './orchestrator/enqueue.js';
export type { PipelineResources, CheckpointRemover } from './resources.js';
export { startStage, WaitingForNodes } from './stages/start-stage.js';
export { storageCheckpointRemover } from './checkpoint-remover.js';
