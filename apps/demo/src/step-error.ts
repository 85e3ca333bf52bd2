/** A demo step that did not do what it should: its message is printed alone, never with a stack. */
export class StepError extends Error {
  override readonly name = 'StepError';
  constructor(
    readonly step: string,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}
