export { Agent, AgentRefused, type AgentOptions } from './agent.js';
export { TaskReporter, type TaskReporterOptions } from './task-reporter.js';
export type { Executor, TaskEvents, TaskHandle, TaskOutcome } from './executors/executor.js';
