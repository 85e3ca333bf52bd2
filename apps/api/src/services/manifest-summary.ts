import { manifestDigest, parseManifest, type Manifest } from '@ito/contracts';
import { getManifestBody } from '@ito/runs';
import type { Resources } from '../resources.js';

/**
 * What an approver must see before allowing a run: every manifest field that spends money or touches data
 * (model and revision, every data source with its digest and license, the curriculum, the post-training
 * recipe, the eval battery and gates, where checkpoints go, the budget). Nothing the confirmation binds is left
 * to the digest alone.
 */
export function manifestSummary(m: Manifest, digest: string) {
  return {
    manifest_digest: digest,
    name: m.name ?? null,
    model: { family: m.model.family, parameters: m.model.parameters, revision: m.model.revision, init: m.model.init },
    data: m.data.map((d) => ({
      ref: d.ref,
      sha256: d.sha256,
      tokens: d.tokens,
      license: d.license,
      decontamination: { eval_suite: d.decontamination.eval_suite, method: d.decontamination.method, contaminated_fraction: d.decontamination.contaminated_fraction },
    })),
    target: {
      objective: m.target.objective,
      tokens: m.target.tokens,
      sequence_length: m.target.sequence_length,
      curriculum: m.target.curriculum,
      long_context_length: m.target.long_context_length ?? null,
    },
    post_training: { recipe: m.post_training.recipe },
    eval: { battery: m.eval.battery, gates: m.eval.gates },
    checkpoint: { storage: m.checkpoint.storage, interval_minutes: m.checkpoint.interval_minutes, keep_last: m.checkpoint.keep_last, async: m.checkpoint.async },
    budget: { ceiling_usd: m.budget.ceiling_usd, max_incremental_cost_usd: m.budget.max_incremental_cost_usd },
  };
}

export type ManifestSummary = ReturnType<typeof manifestSummary>;

/**
 * The summary of the manifest stored under a digest, derived from the stored bytes themselves (and only when
 * they still hash to that digest), so what is shown is exactly what the confirmation binds.
 */
export async function storedManifestSummary(res: Resources, tenantId: string, digest: string): Promise<ManifestSummary | null> {
  const body = await getManifestBody(res.pool, tenantId, digest);
  if (body === null || manifestDigest(body) !== digest) return null;
  const parsed = parseManifest(body);
  return parsed.ok ? manifestSummary(parsed.manifest, digest) : null;
}
