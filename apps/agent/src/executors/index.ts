export type { Executor, TaskEvents, TaskHandle, TaskOutcome } from './executor.js';
export { SimulatedExecutor, type SimulatedExecutorOptions } from './simulated.js';
export { ProcessExecutor, type ProcessExecutorOptions, type ProcessTaskHandle } from './process.js';
export { parseSimFaults, FaultSpecError, FAULT_KINDS, type SimFault, type FaultKind } from './faults.js';
export { loadTrainerConfig, parseTrainerConfig, TrainerConfigError, type TrainerConfig } from './trainer-config.js';
export { checkpointUri, isUnderRunPrefix } from './checkpoint-uri.js';
export { DEFAULT_BANDWIDTH, type BandwidthModel } from './simulated-model.js';
export type { TrainerStreamStats } from './trainer-run.js';
