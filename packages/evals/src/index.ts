export { checkBatteryFile, type CheckedBatteryFile } from './battery-file.js';
export { createEvalBatteryRegistry, type EvalBatteryRegistry, type EvalBatteryRegistryDeps, type Queryable } from './battery-registry.js';
export { fetchRegisteredBattery, type FetchedBattery } from './battery-fetch.js';
export { lookupEvalBattery, type RegisteredBattery } from './battery-lookup.js';
