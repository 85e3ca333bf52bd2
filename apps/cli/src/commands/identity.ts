import { createInterface } from 'node:readline';
import { ItoError, fail, ok } from '@ito/contracts';
import type { Context } from '../context.js';
import { readStoredCredential, removeCredential, storeCredential } from '../credentials/store.js';
import { keyValue } from '../human/format.js';
import { usageOutcome } from '../output.js';
import type { Handler } from './handler.js';

const MAX_KEY_BYTES = 4096;

/** Reads the key from piped stdin, or from a hidden prompt on a terminal. Never from argv. */
async function readKey(): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > MAX_KEY_BYTES) throw new ItoError('validation_failed', 'stdin holds more than a key');
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8').trim();
  }
  return hiddenPrompt('API key: ');
}

function hiddenPrompt(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const output = rl as unknown as { _writeToOutput: (s: string) => void };
    process.stderr.write(question);
    output._writeToOutput = () => {}; // keep the typed key off the screen
    rl.question('', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer.trim());
    });
  });
}

export const loginCommand: Handler = async (_cmd, ctx) => {
  const key = await readKey();
  if (!key) return usageOutcome('no key given: pipe it on stdin (printf %s "$KEY" | ito login) or type it at the prompt');
  const answer = await ctx.apiWithKey(key).whoami();
  if (!answer.ok) return { envelope: answer };
  await storeCredential(ctx.config.ITO_TOKEN_FILE, {
    version: 1,
    api_url: ctx.config.ITO_API_URL,
    key,
    stored_at: new Date().toISOString(),
    identity: answer.data,
  });
  return {
    envelope: ok({ ...answer.data, token_file: ctx.config.ITO_TOKEN_FILE }),
    human: (d) => `logged in; credential stored in ${ctx.config.ITO_TOKEN_FILE}\n${keyValue(identityOnly(d))}`,
  };
};

export const logoutCommand: Handler = async (_cmd, ctx) => {
  const stored = await readStoredCredential(ctx.config.ITO_TOKEN_FILE);
  if (!stored) {
    return { envelope: ok({ logged_out: false }, { liveApiContacted: false, notice: `no stored credential in ${ctx.config.ITO_TOKEN_FILE}; nothing to do` }), human: () => '' };
  }
  const answer = await ctx.apiWithKey(stored.key).logout();
  // A key the server already revoked is as logged out as it gets; anything else keeps the file so the user can retry.
  if (!answer.ok && answer.error.code !== 'credential_revoked') {
    return { envelope: fail(answer.error.code, `${answer.error.message}; the local credential was kept so logout can be retried`, { details: answer.error.details ?? {} }) };
  }
  await removeCredential(ctx.config.ITO_TOKEN_FILE);
  return { envelope: ok({ logged_out: true, revoked: true }), human: () => 'logged out; the key was revoked and the local file removed\n' };
};

export const authCommand: Handler = async (_cmd, ctx: Context) => {
  const api = await ctx.api();
  const answer = await api.whoami();
  return { envelope: answer, human: (d) => keyValue(identityOnly(d)) };
};

function identityOnly(d: Record<string, unknown>): Record<string, unknown> {
  const { key: _k, ...rest } = d;
  return rest;
}
