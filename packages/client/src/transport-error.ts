import { ItoError } from '@ito/contracts';

export type TransportCode = 'connect_failed' | 'timeout' | 'transport_ambiguous';

/**
 * A call that did not produce a server answer. `liveApiContacted` says whether any byte reached the server:
 * false means the request certainly had no effect; true with a mutation means the outcome is unknown.
 * Messages name the host and the phase only, never a header, so a credential cannot leak through them.
 */
export class TransportError extends ItoError {
  constructor(
    code: TransportCode,
    message: string,
    readonly liveApiContacted: boolean,
    readonly bodySent: boolean,
    details?: Record<string, unknown>,
  ) {
    super(code, message, details);
  }

  override toEnvelope(): ReturnType<ItoError['toEnvelope']> {
    return super.toEnvelope(this.liveApiContacted);
  }
}

export function isTransportError(err: unknown): err is TransportError {
  return err instanceof TransportError;
}
