export { Agent, AgentRefused, type AgentOptions } from './agent.js';
export { HostHeartbeats, type HeartbeatSender, type HostHeartbeatsOptions } from './host-heartbeats.js';
export { TaskReporter, type TaskReporterOptions } from './task-reporter.js';
export * from './executors/index.js';
