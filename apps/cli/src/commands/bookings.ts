import { columnsOf, keyValue, table } from '../human/format.js';
import { renderFindings, renderPlanAnswer } from '../human/plan.js';
import { readManifestSafely } from '../manifest/read-manifest.js';
import { flag, type Handler } from './handler.js';

const BOOKING_COLUMNS = ['booking_id', 'status', 'gpu', 'nodes', 'gpus_per_node', 'region', 'fabric', 'term_end'];

export const bookingsListCommand: Handler = async (_cmd, ctx) => {
  const answer = await (await ctx.api()).listBookings();
  return {
    envelope: answer,
    human: (d: { bookings: Record<string, unknown>[] }) => table(d.bookings.map(flattenBooking), columnsOf(d.bookings.map(flattenBooking), BOOKING_COLUMNS)),
  };
};

export const bookingsShowCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).getBooking(cmd.positionals[0]!);
  return { envelope: answer, human: (d) => keyValue(flattenBooking(d)) };
};

export const eligibilityCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).eligibility(flag(cmd, 'booking')!);
  return { envelope: answer, human: (d) => keyValue(flattenBooking(d)) };
};

/** The manifest is read (and may be refused) before any client exists, so a refusal contacts nothing. */
export const planCommand: Handler = async (cmd, ctx) => {
  const manifest = await readManifestSafely(flag(cmd, 'manifest')!);
  const answer = await (await ctx.api()).plan({ booking_id: flag(cmd, 'booking')!, manifest: manifest.text });
  if (!answer.ok && !ctx.json && answer.error.details?.findings) {
    // A plan that would be refused lists every gate under its error, so all that needs fixing is seen at once.
    const hint = renderFindings(answer.error.details.findings).trimEnd();
    return { envelope: { ...answer, error: { ...answer.error, details: { ...answer.error.details, hint } } } };
  }
  return {
    envelope: answer,
    human: renderPlanAnswer,
  };
};

/** Nested topology and term read better as columns of their own. */
function flattenBooking(b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && (k === 'topology' || k === 'term')) {
      for (const [k2, v2] of Object.entries(v as Record<string, unknown>)) out[k === 'term' ? `term_${k2}` : k2] = v2;
    } else out[k] = v;
  }
  return out;
}
