export { ItoClient, type ItoClientOptions, type MutationOptions, type Recovery } from './client.js';
export { ItoApi, type RunSummary, type TrainRequest, type RunAction } from './api.js';
export { TransportError, isTransportError, type TransportCode } from './transport-error.js';
export { poll, STOP_POLLING_CODES, type PollOptions } from './poll.js';
export { waitOutRateLimit, type RateLimitWaitOptions } from './rate-limit-wait.js';
export { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
export { exchange, type ExchangeRequest, type ExchangeResponse } from './exchange.js';
export { AgentApi } from './agent-api.js';
