/**
 * docs/api.md, rendered from the OpenAPI document the server serves (which is built from the same zod schemas
 * that validate each route), so the reference a reader sees cannot drift from what the server accepts. Pure: the
 * document in, Markdown out; a test compares the committed file with this rendering of the live document.
 */

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete'];

export function renderApiReference(doc: Record<string, unknown>): string {
  const info = doc.info as { title: string };
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const out: string[] = [
    `# ${info.title}: reference`,
    '',
    '<!-- Generated from the served OpenAPI document (GET /v1/openapi.json) by `npm run docs:api`; do not edit by hand. -->',
    '',
    'Every answer is the JSON envelope `{ok, live_api_contacted, notice, data | error}` unless a route says otherwise;',
    'a refusal carries a stable `error.code` (docs/contract.md lists them with their HTTP status). Credentials are',
    'bearer tokens in the `Authorization` header; "Access" names the scope a route needs.',
    '',
  ];
  const groups = new Map<string, Array<[string, string, Operation]>>();
  for (const [path, ops] of Object.entries(paths)) {
    const group = groupOf(path);
    const list = groups.get(group) ?? [];
    for (const method of Object.keys(ops).sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b))) list.push([method, path, ops[method]!]);
    groups.set(group, list);
  }
  for (const group of [...groups.keys()].sort()) {
    out.push(`## ${group}`, '');
    for (const [method, path, op] of groups.get(group)!.sort((a, b) => a[1].localeCompare(b[1]) || METHOD_ORDER.indexOf(a[0]) - METHOD_ORDER.indexOf(b[0]))) {
      out.push(...renderOperation(method, path, op));
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** `/v1/runs/{id}/events` → `runs`; a route outside /v1 is a service route. */
function groupOf(path: string): string {
  const m = /^\/v1\/([a-z-]+)/.exec(path);
  return m ? m[1]! : 'service';
}

function renderOperation(method: string, path: string, op: Operation): string[] {
  const lines = [`### \`${method.toUpperCase()} ${path}\``, ''];
  if (op.summary) lines.push(op.summary, '');
  const about = [op.description, op.operationId ? `Operation id: \`${op.operationId}\`.` : ''].filter(Boolean).join(' ');
  if (about) lines.push(about, '');
  const params = op.parameters ?? [];
  if (params.length > 0) {
    lines.push('| parameter | in | required | type |', '| --- | --- | --- | --- |');
    for (const p of params) lines.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | ${typeOf(p.schema)} |`);
    lines.push('');
  }
  const body = op.requestBody?.content?.['application/json']?.schema;
  if (body) {
    const props = (body.properties ?? {}) as Record<string, Schema>;
    const required = new Set((body.required ?? []) as string[]);
    if (Object.keys(props).length === 0) lines.push(`Body: ${typeOf(body)}.`, '');
    else {
      lines.push('| body field | required | type |', '| --- | --- | --- |');
      for (const [name, schema] of Object.entries(props)) lines.push(`| \`${name}\` | ${required.has(name) ? 'yes' : 'no'} | ${typeOf(schema)} |`);
      lines.push('');
    }
  }
  const refusals = refusalsOf(op);
  if (refusals.length > 0) lines.push(`Refusals: ${refusals.join('; ')}.`, '');
  return lines;
}

/** The part of a documented refusal that narrows the envelope's `error.code`. */
interface NarrowedError {
  properties?: { error?: { properties?: { code?: { enum?: string[] } } } };
}

/** `404 \`not_found\`` per documented error status: the codes each status narrows the error envelope to. */
function refusalsOf(op: Operation): string[] {
  return Object.entries(op.responses ?? {})
    .filter(([status]) => /^[45]\d\d$/.test(status))
    .map(([status, r]) => {
      const allOf = (r.content?.['application/json']?.schema?.allOf ?? []) as Schema[];
      const codes = allOf.flatMap((s) => (s as NarrowedError).properties?.error?.properties?.code?.enum ?? []);
      return `${status} ${codes.map((c) => `\`${c}\``).join(', ')}`;
    });
}

/** A short, readable type: `string (1–255)`, `integer ≥ 0`, `one of a, b`, `array of object`. */
export function typeOf(schema: Schema | undefined): string {
  if (!schema) return 'any';
  if (Array.isArray(schema.enum)) return `one of ${(schema.enum as unknown[]).map((v) => `\`${String(v)}\``).join(', ')}`;
  if (schema.const !== undefined) return `\`${String(schema.const)}\``;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) return (schema[key] as Schema[]).map(typeOf).join(' or ');
  }
  const type = Array.isArray(schema.type) ? (schema.type as string[]).join(' or ') : (schema.type as string | undefined);
  switch (type) {
    case 'string': {
      const min = schema.minLength as number | undefined;
      const max = schema.maxLength as number | undefined;
      const fmt = schema.format ? ` (${String(schema.format)})` : '';
      const len = min !== undefined || max !== undefined ? ` (${min ?? 0}–${max ?? '∞'} chars)` : '';
      return `string${fmt}${len}`;
    }
    case 'integer':
    case 'number': {
      const bounds = [schema.minimum !== undefined ? `≥ ${String(schema.minimum)}` : '', schema.maximum !== undefined ? `≤ ${String(schema.maximum)}` : ''].filter(Boolean).join(', ');
      return bounds ? `${type} ${bounds}` : type;
    }
    case 'array':
      return `array of ${typeOf(schema.items as Schema | undefined)}${schema.maxItems !== undefined ? ` (≤ ${String(schema.maxItems)})` : ''}`;
    case 'object':
      return 'object';
    default:
      return type ?? 'any';
  }
}
