/** People's view of an audit verdict: the chain's head in words, not as a JSON object. Pure. */
import { keyValue } from './format.js';

type Data = Record<string, unknown>;

export function renderAuditVerdict(d: Data): string {
  const view: Data = { ...d };
  const head = d.head && typeof d.head === 'object' ? (d.head as Data) : null;
  if (head) view.head = `event ${String(head.tenant_seq)} of the tenant's chain, hash ${String(head.hash)}`;
  else if ('head' in d) view.head = '(empty chain)';
  return keyValue(view);
}
