/**
 * The most chain links `GET /v1/audit/events` returns a page (≈ 0.4 KiB each with its event, so ≈ 2 MiB a page).
 * An auditor pages through the whole chain within the credential's requests a minute: at 1,000 a page, ten
 * million events were 10,000 requests and over eight minutes of waiting out the rate limit; at 5,000, 2,000.
 */
export const AUDIT_EVENTS_PAGE_MAX = 5_000;
