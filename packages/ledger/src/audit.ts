/**
 * The audit formats and their verifiers, free of any database: what `ito audit verify --export` needs to check
 * an export with nothing but the file and a public key.
 */
export { canonicalJson, sha256Hex } from './canonical-json.js';
export { contentHash, linkHash } from './hashing.js';
export { tenantLinkHash, type TenantLink } from './audit/tenant-link.js';
export { TenantChainWalker, verifyTenantRecords, type AuditEventBody, type AuditRecord, type RecordsVerdict } from './audit/records.js';
export { anchoredStart, type DigestAnchor } from './audit/since-digest.js';
export { leafHash, merkleProof, merkleRoot, rootFromProof, type ProofStep, type TenantHead } from './audit/merkle.js';
export { DIGEST_FORMAT, keyIdOf, loadPublicKey, loadSigningKey, signDigest, verifyDigestSignature, type AuditDigest, type SignedDigest } from './audit/digest.js';
export {
  EXPORT_FORMAT,
  ExportVerifier,
  MAX_EXPORT_LINE_BYTES,
  exportHeaderLine,
  exportRecordLine,
  exportTrailerLine,
  schemaVersionsOf,
  type ExportAnchor,
  type ExportHeader,
  type ExportTrailer,
  type ExportVerdict,
} from './audit/export-file.js';
