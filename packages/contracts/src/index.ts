export * from './error-codes.js';
export * from './envelope.js';
export * from './run-state.js';
export * from './manifest.js';
export * from './stages.js';
export * from './agent-protocol.js';
