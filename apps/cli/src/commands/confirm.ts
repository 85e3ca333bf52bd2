import { CONFIRMATION_ACTIONS, type ConfirmationAction, type ConfirmationRequest } from '@ito/contracts';
import { renderConfirmation } from '../human/views.js';
import { readManifestSafely } from '../manifest/read-manifest.js';
import { usageOutcome } from '../output.js';
import { flag, type Handler } from './handler.js';

export const confirmRequestCommand: Handler = async (cmd, ctx) => {
  const action = flag(cmd, 'action')!;
  if (!(CONFIRMATION_ACTIONS as readonly string[]).includes(action)) {
    return usageOutcome(`--action must be one of ${CONFIRMATION_ACTIONS.join(', ')}`);
  }
  let body: ConfirmationRequest;
  if (action === 'train.create') {
    const booking = flag(cmd, 'booking');
    const path = flag(cmd, 'manifest');
    if (!booking || !path) return usageOutcome('train.create needs --booking <id> and --manifest <abs-path>');
    if (flag(cmd, 'run')) return usageOutcome('train.create takes no --run');
    const manifest = await readManifestSafely(path);
    body = { action, booking_id: booking, manifest: manifest.text, manifest_digest: manifest.digest };
  } else {
    const run = flag(cmd, 'run');
    if (!run) return usageOutcome(`${action} needs --run <id>`);
    // The server binds a run action to the run's own booking; it takes no --booking or --manifest.
    if (flag(cmd, 'manifest') || flag(cmd, 'booking')) return usageOutcome(`${action} takes only --run <id> (the run names its booking)`);
    body = { action: action as Exclude<ConfirmationAction, 'train.create'>, run_id: run };
  }
  const answer = await (await ctx.api()).requestConfirmation(body);
  return {
    envelope: answer,
    human: (d) => `${renderConfirmation(d)}\nAn approver must run: ito confirm approve ${String(d.confirmation_ref ?? '<ref>')}\n`,
  };
};

export const confirmShowCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).getConfirmation(cmd.positionals[0]!);
  return { envelope: answer, human: renderConfirmation };
};

export const confirmApproveCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).decideConfirmation(cmd.positionals[0]!, 'approve');
  return { envelope: answer, human: renderConfirmation };
};

export const confirmDenyCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).decideConfirmation(cmd.positionals[0]!, 'deny');
  return { envelope: answer, human: renderConfirmation };
};
