import { ItoError, type Manifest } from '@ito/contracts';
import { checkFileRefs, checkFileStorage } from './file-roots.js';

/** What a tenant allows its runs to use; set by the operator, defaults below. */
export interface TenantPolicy {
  allowed_licenses: string[];
  max_contaminated_fraction: number;
  checkpoint_storage: { schemes: string[]; prefixes: string[] };
  /**
   * Absolute, normalised directories whose files this tenant's `file://` data refs and `file://` checkpoint
   * storage may name; none by default, so a tenant reads no file of the server's host until the operator grants
   * one (`ito-admin tenant policy set --file-roots`).
   */
  file_roots: string[];
}

export const DEFAULT_TENANT_POLICY: TenantPolicy = {
  allowed_licenses: ['proprietary-owned', 'cc-by-4.0', 'cc-by-sa-4.0', 'cc0-1.0', 'apache-2.0', 'mit', 'odc-by-1.0'],
  max_contaminated_fraction: 0.001,
  // No prefixes means any bucket of an allowed scheme; an operator narrows it per tenant.
  checkpoint_storage: { schemes: ['s3', 'gs', 'az'], prefixes: [] },
  file_roots: [],
};

/**
 * Data policy: every `file://` ref is inside the tenant's file roots (`data_ref_not_permitted`, decided before
 * anything is opened), every source's licence is allowed, its decontamination was made against the manifest's
 * own eval battery, and its contaminated fraction is within the limit. The first violation names its JSON path.
 */
export function checkDataPolicy(manifest: Manifest, policy: TenantPolicy): void {
  checkFileRefs(manifest, policy.file_roots ?? []);
  manifest.data.forEach((source, i) => {
    const path = `$.data[${i}]`;
    if (!policy.allowed_licenses.includes(source.license)) {
      throw new ItoError('data_policy_violation', `${path}.license "${source.license}" is not allowed for this account`, { path: `${path}.license` });
    }
    const d = source.decontamination;
    if (d.eval_suite !== manifest.eval.battery) {
      throw new ItoError(
        'data_policy_violation',
        `${path}.decontamination was checked against ${d.eval_suite}, not this run's eval battery ${manifest.eval.battery}`,
        { path: `${path}.decontamination.eval_suite` },
      );
    }
    if (d.contaminated_fraction > policy.max_contaminated_fraction) {
      throw new ItoError(
        'data_policy_violation',
        `${path} is ${d.contaminated_fraction} contaminated; the limit is ${policy.max_contaminated_fraction}`,
        { path: `${path}.decontamination.contaminated_fraction` },
      );
    }
  });
}

/**
 * Checkpoint storage: an allowed scheme, under an allowed prefix when the tenant lists any, and, for `file://`,
 * a normalised path inside one of the tenant's file roots.
 */
export function checkCheckpointStorage(manifest: Manifest, policy: TenantPolicy): void {
  const uri = manifest.checkpoint.storage;
  const scheme = uri.slice(0, uri.indexOf('://'));
  if (!policy.checkpoint_storage.schemes.includes(scheme)) {
    throw new ItoError('checkpoint_storage_invalid', `checkpoint storage scheme "${scheme}" is not allowed (allowed: ${policy.checkpoint_storage.schemes.join(', ')})`, {
      path: '$.checkpoint.storage',
    });
  }
  const prefixes = policy.checkpoint_storage.prefixes;
  if (prefixes.length > 0 && !prefixes.some((p) => uri.startsWith(p))) {
    throw new ItoError('checkpoint_storage_invalid', `checkpoint storage ${uri} is outside the prefixes allowed for this account`, {
      path: '$.checkpoint.storage',
    });
  }
  checkFileStorage(uri, policy.file_roots ?? []);
}

/** Budget: the estimate within the ceiling and the incremental cost within its own cap. */
export function checkBudget(manifest: Manifest, estimatedCostUsd: number, incrementalCostUsd: number): void {
  checkCeiling(manifest, estimatedCostUsd);
  checkIncrementalCost(manifest, incrementalCostUsd);
}

/** The estimate within `budget.ceiling_usd`. */
export function checkCeiling(manifest: Manifest, estimatedCostUsd: number): void {
  if (estimatedCostUsd > manifest.budget.ceiling_usd) {
    throw new ItoError('budget_exceeded', `estimated cost $${estimatedCostUsd.toFixed(2)} exceeds the ceiling $${manifest.budget.ceiling_usd.toFixed(2)}`, {
      estimated_cost_usd: estimatedCostUsd,
      ceiling_usd: manifest.budget.ceiling_usd,
    });
  }
}

/** The cost beyond the booking within `budget.max_incremental_cost_usd`. */
export function checkIncrementalCost(manifest: Manifest, incrementalCostUsd: number): void {
  if (incrementalCostUsd > manifest.budget.max_incremental_cost_usd) {
    throw new ItoError(
      'incremental_cost_exceeded',
      `incremental cost $${incrementalCostUsd.toFixed(2)} exceeds the maximum $${manifest.budget.max_incremental_cost_usd.toFixed(2)}`,
      { incremental_cost_usd: incrementalCostUsd, max_incremental_cost_usd: manifest.budget.max_incremental_cost_usd },
    );
  }
}
