import { ItoApi, ItoClient } from '@ito/client';
import { ItoError } from '@ito/contracts';
import type { ItoConfig } from '@ito/config';
import { resolveCredential } from './credentials/resolve.js';

export interface Context {
  config: ItoConfig;
  json: boolean;
  /** Colour and live progress lines only when stderr is a terminal and NO_COLOR is unset. */
  colour: boolean;
  stderrIsTty: boolean;
  connectTimeoutMs: number;
  timeoutMs: number;
  /** An API client with the resolved credential; refuses with `unauthenticated` before any network call. */
  api(): Promise<ItoApi>;
  /** An API client presenting the given key (login checks a key before storing it). */
  apiWithKey(key: string | undefined): ItoApi;
}

export function createContext(config: ItoConfig, opts: { json: boolean; connectTimeoutMs: number; timeoutMs: number }): Context {
  const make = (credential: string | undefined) =>
    new ItoApi(
      new ItoClient({ baseUrl: config.ITO_API_URL, credential, connectTimeoutMs: opts.connectTimeoutMs, timeoutMs: opts.timeoutMs, userAgent: 'ito-cli' }),
    );
  const stderrIsTty = Boolean(process.stderr.isTTY);
  return {
    config,
    json: opts.json,
    stderrIsTty,
    colour: stderrIsTty && !process.env.NO_COLOR,
    connectTimeoutMs: opts.connectTimeoutMs,
    timeoutMs: opts.timeoutMs,
    apiWithKey: make,
    async api() {
      const credential = await resolveCredential(config);
      if (!credential) {
        throw new ItoError('unauthenticated', 'no credential: run `ito login` (key on stdin) or set ITO_API_KEY', {
          hint: `looked in ${config.ITO_TOKEN_FILE} and ITO_API_KEY`,
        });
      }
      return make(credential.key);
    },
  };
}
