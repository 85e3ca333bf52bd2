export { pipelineJobs, type PipelineJobs } from './jobs/catalog.js';
export { pipelineHandlers } from './jobs/handlers.js';
export { orchestratorProjection, startRelay, ORCHESTRATOR_PROJECTION, type Relay } from './orchestrator/relay.js';
export { enqueueCommand } from './orchestrator/enqueue.js';
export type { PipelineResources, CheckpointRemover } from './resources.js';
export { startStage, WaitingForNodes } from './stages/start-stage.js';
export { storageCheckpointRemover } from './checkpoint-remover.js';
