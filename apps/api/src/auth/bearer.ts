/** The bearer credential of a request: what the API reads of its Authorization header. */
const BEARER = /^Bearer ([A-Za-z0-9_\-]{10,200})$/;

/** Extracts the bearer credential from an Authorization header; anything else is no credential. */
export function bearerFrom(header: string | undefined): string | null {
  if (!header) return null;
  const m = BEARER.exec(header.trim());
  return m ? m[1]! : null;
}
