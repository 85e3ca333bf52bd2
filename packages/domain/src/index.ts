export * from './run/run-events.js';
export * from './run/run-state.js';
export * from './run/run-decider.js';
export * from './confirmation/confirmation.js';
export * from './booking/booking.js';
export * from './policy/tenant-policy.js';
export * from './secret-scan.js';
