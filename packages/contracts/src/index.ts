export * from './error-codes.js';
export * from './envelope.js';
export * from './run-state.js';
export * from './manifest.js';
export * from './strict-json.js';
export * from './json-path.js';
export * from './input-issues.js';
