import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

export const DIGEST_FORMAT = 'ito.audit.digest/v1';

/**
 * What the server publishes: the global chain's link at `seq` and the root over every tenant's chain head as
 * of that link. Anyone holding it (and the public key) can later check that the ledger still leads to it.
 */
export interface AuditDigest {
  format: typeof DIGEST_FORMAT;
  seq: number;
  head_hash: string | null;
  tenants_root: string | null;
  tenant_count: number;
  published_at: string;
}

export interface SignedDigest {
  digest: AuditDigest;
  /** Ed25519 over the canonical JSON of `digest`, base64. */
  signature: string;
  /** sha256 of the public key's DER (SPKI), hex: names the key without revealing anything. */
  key_id: string;
}

export const digestBytes = (d: AuditDigest): Buffer => Buffer.from(canonicalJson(d), 'utf8');

/** Reads an Ed25519 private key (PEM, PKCS#8); anything else is refused. */
export function loadSigningKey(pem: string): KeyObject {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the signing key is not an Ed25519 key');
  return key;
}

export function loadPublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the public key is not an Ed25519 key');
  return key;
}

export function keyIdOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('hex');
}

export function signDigest(d: AuditDigest, key: KeyObject): SignedDigest {
  return { digest: d, signature: sign(null, digestBytes(d), key).toString('base64'), key_id: keyIdOf(key) };
}

export function verifyDigestSignature(s: SignedDigest, publicKey: KeyObject): boolean {
  if (s.key_id !== keyIdOf(publicKey)) return false;
  try {
    return verify(null, digestBytes(s.digest), publicKey, Buffer.from(s.signature, 'base64'));
  } catch {
    return false;
  }
}
