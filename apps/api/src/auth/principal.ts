import { FLEET_SCOPE, ItoError, type Scope } from '@ito/contracts';

/** Who is calling: a tenant's API key (with scopes, and the principal holding it when known) or a node agent's credential. */
export type Principal =
  | { kind: 'key'; tenantId: string; keyId: string; scopes: Scope[]; principal: string | null }
  | { kind: 'node'; tenantId: string; nodeId: string; bookingId: string };

export function requireScope(principal: Principal | null, scope: Scope): Extract<Principal, { kind: 'key' }> {
  if (!principal) throw new ItoError('unauthenticated', 'a bearer credential is required');
  if (principal.kind !== 'key') throw new ItoError('forbidden', 'node credentials may only call /v1/agent routes');
  // A tenant's `admin` holds every tenant scope; the operator's fleet scope is never a tenant's to hold.
  if (!principal.scopes.includes(scope) && !(principal.scopes.includes('admin') && scope !== FLEET_SCOPE)) {
    throw new ItoError('forbidden', `this credential lacks the ${scope} scope`);
  }
  return principal;
}

export function requireNode(principal: Principal | null): Extract<Principal, { kind: 'node' }> {
  if (!principal) throw new ItoError('unauthenticated', 'a node credential is required');
  if (principal.kind !== 'node') throw new ItoError('forbidden', 'only a node credential may call this route');
  return principal;
}

/** Whether the caller reads fleet-wide: an operator credential, never a tenant's key (not even its `admin`). */
export function readsFleet(principal: Principal | null): boolean {
  return principal?.kind === 'key' && principal.scopes.includes(FLEET_SCOPE);
}
