// Goodput, badput by cause, interruption rate, checkpoint bandwidth and latencies: pure folds of the ledger.
export * from './causes.js';
export * from './segments.js';
export * from './run-fold.js';
export * from './figures.js';
export * from './units.js';
export * from './run-clock.js';
export * from './day-sums.js';
export * from './histogram.js';
export * from './run-batch.js';
export * from './stored-segments.js';
