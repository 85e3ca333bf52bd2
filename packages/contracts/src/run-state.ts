/**
 * The run state enum (docs/design.md, "Run lifecycle"). A projection of the ledger: nothing stores it as truth.
 */
export const RUN_STATES = [
  'reserved',
  'confirmed',
  'preparing_data',
  'planning',
  'training',
  'recovering',
  'evaluating',
  'post_training',
  'succeeded',
  'awaiting_operator',
  'cancelling',
  'cancelled',
  'gate_failed',
  'failed',
  'cleaning_up',
  'cleaned',
] as const;

export type RunState = (typeof RUN_STATES)[number];

/** States a run cannot leave except into cleanup. A failed gate is terminal and cannot be overridden. */
export const TERMINAL_RUN_STATES = ['succeeded', 'cancelled', 'gate_failed', 'failed'] as const satisfies readonly RunState[];

export function isTerminal(state: RunState): boolean {
  return (TERMINAL_RUN_STATES as readonly RunState[]).includes(state);
}

export const CURRICULUM_STAGES = ['pretrain', 'mid_train', 'long_context', 'post_training'] as const;
export type CurriculumStage = (typeof CURRICULUM_STAGES)[number];

export const CONFIRMATION_ACTIONS = ['train.create', 'run.cancel', 'run.cleanup', 'run.restart', 'booking.release'] as const;
export type ConfirmationAction = (typeof CONFIRMATION_ACTIONS)[number];

/** The body of `POST /v1/confirmations`: a train names the booking and the manifest's bytes, any other action its run. */
export type ConfirmationRequest =
  | { action: 'train.create'; booking_id: string; manifest: string; manifest_digest: string }
  | { action: Exclude<ConfirmationAction, 'train.create'>; run_id: string };

export const BOOKING_STATUSES = ['pending', 'completed', 'expired', 'revoked', 'released'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

/** What a tenant's keys may be granted. `admin` holds every tenant scope, and nothing beyond its tenant. */
export const TENANT_SCOPES = ['runs:read', 'runs:write', 'confirmations:approve', 'desk:read', 'audit:read', 'admin'] as const;
/**
 * The operator's own scope: the pricing desk's fleet-wide figures, every tenant's runs and bookings. Only
 * `ito-admin operator-key create` grants it, never to a tenant's key.
 */
export const FLEET_SCOPE = 'desk:fleet';
export const SCOPES = [...TENANT_SCOPES, FLEET_SCOPE] as const;
export type Scope = (typeof SCOPES)[number];
