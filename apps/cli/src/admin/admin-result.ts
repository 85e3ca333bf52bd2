/** What an ito-admin verb answers: its data (printed as JSON with --json) and how a person reads it. */
export interface AdminResult {
  data: Record<string, unknown>;
  human: (data: Record<string, unknown>) => string;
}
