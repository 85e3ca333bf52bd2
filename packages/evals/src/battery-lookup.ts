import { EVAL_BATTERY_REGISTERED, EVAL_BATTERY_TENANT_ID, evalBatteryStreamId, isEvalBatteryName, type EvalBatteryRegisteredEvent } from '@ito/domain';
import type { Ledger } from '@ito/ledger';

export interface RegisteredBattery extends EvalBatteryRegisteredEvent {
  registered_at: string;
}

/**
 * The registration of the battery a name refers to, or null: read from the name's own stream, so it needs the
 * ledger alone (the API's confirmation gate asks this without any storage). A name that is not a battery name
 * at all is never looked up.
 */
export async function lookupEvalBattery(ledger: Ledger, name: string): Promise<RegisteredBattery | null> {
  if (!isEvalBatteryName(name)) return null;
  const [event] = await ledger.readStream(evalBatteryStreamId(name), { tenantId: EVAL_BATTERY_TENANT_ID });
  if (!event || event.type !== EVAL_BATTERY_REGISTERED) return null;
  return { ...(event.data as unknown as EvalBatteryRegisteredEvent), registered_at: event.recordedAt.toISOString() };
}
