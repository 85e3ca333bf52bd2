export * from './env.js';
export * from './logger.js';
