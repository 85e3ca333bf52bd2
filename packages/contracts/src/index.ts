export * from './error-codes.js';
export * from './envelope.js';
export * from './run-state.js';
export * from './manifest.js';
