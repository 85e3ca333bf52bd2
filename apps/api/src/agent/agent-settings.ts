/** How agents are told to pace themselves. */
export interface AgentSettings {
  /** @defaultValue 2 (ITO_HEARTBEAT_INTERVAL_S) */
  heartbeatIntervalS: number;
  /** @defaultValue 3 (ITO_HEARTBEAT_MISSES) */
  heartbeatMisses: number;
  /** k, for the start-up allowance `status` shows (as the monitor judges it). @defaultValue 5 (ITO_HANG_STEP_FACTOR) */
  hangFactor?: number;
  /** @defaultValue 300 (ITO_FIRST_STEP_MAX_S) */
  firstStepMaxS?: number;
}

export const DEFAULT_AGENT_SETTINGS: AgentSettings = { heartbeatIntervalS: 2, heartbeatMisses: 3, hangFactor: 5, firstStepMaxS: 300 };
