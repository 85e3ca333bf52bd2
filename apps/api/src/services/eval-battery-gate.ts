import { ItoError } from '@ito/contracts';
import { lookupEvalBattery } from '@ito/evals';
import type { Ledger } from '@ito/ledger';

/**
 * The confirmation request's check that the manifest's eval battery is registered (`ito-admin battery add`):
 * without its items data prep cannot decontaminate, so an approver is never asked to allow a run that would fail
 * there. The lookup is the registry's own, so the API and the workers agree on what "registered" means. The
 * refusal does not repeat the name: it is the requester's input.
 */
export async function checkEvalBatteryRegistered(ledger: Ledger, name: string): Promise<void> {
  if (!(await lookupEvalBattery(ledger, name))) {
    throw new ItoError('eval_battery_not_registered', 'the eval battery the manifest names is not registered on this server (the operator registers one with ito-admin battery add)', { path: '$.eval.battery' });
  }
}
