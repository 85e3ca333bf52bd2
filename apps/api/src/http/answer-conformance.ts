import type { FastifyInstance } from 'fastify';

/** Per served route (`METHOD /path`, Fastify syntax): each documented status and, for a refusal, its codes. */
type Expected = Map<string, Map<number, ReadonlySet<string> | null>>;

interface DocumentedResponse {
  content?: Record<string, { schema?: { allOf?: Array<{ properties?: { error?: { properties?: { code?: { enum?: string[] } } } } }> } }>;
}

/** What the OpenAPI document promises about each operation's answers. */
export function expectedAnswers(doc: Record<string, unknown>): Expected {
  const out: Expected = new Map();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, DocumentedResponse> }>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const statuses = new Map<number, ReadonlySet<string> | null>();
      for (const [status, response] of Object.entries(op.responses)) {
        const codes = response.content?.['application/json']?.schema?.allOf?.[1]?.properties?.error?.properties?.code?.enum;
        statuses.set(Number(status), codes ? new Set(codes) : null);
      }
      out.set(`${method.toUpperCase()} ${path.replace(/\{([a-z_]+)\}/g, ':$1')}`, statuses);
    }
  }
  return out;
}

/**
 * Reports every answer of a documented route whose status, or whose error code at that status, its OpenAPI
 * document does not list. Off in production (the hook is only installed with a reporter); the test servers
 * turn it on, so every test that drives the API also checks that the document tells the truth.
 */
export function watchAnswersAgainstDocument(app: FastifyInstance, report: (violation: string) => void): (doc: Record<string, unknown>) => void {
  let expected: Expected | null = null;
  app.addHook('onSend', async (req, reply, payload) => {
    const route = `${req.method} ${req.routeOptions.url ?? ''}`;
    const statuses = expected?.get(route);
    if (!statuses) return payload;
    const status = reply.statusCode;
    if (!statuses.has(status)) {
      report(`${route} answered ${status}, which its OpenAPI operation does not list`);
      return payload;
    }
    const codes = statuses.get(status);
    if (codes && typeof payload === 'string') {
      const code = errorCodeOf(payload);
      if (!codes.has(code)) report(`${route} answered ${status} ${code}, which its OpenAPI operation does not list at ${status}`);
    }
    return payload;
  });
  return (doc) => {
    expected = expectedAnswers(doc);
  };
}

function errorCodeOf(payload: string): string {
  try {
    return (JSON.parse(payload) as { error?: { code?: string } }).error?.code ?? '(no error code)';
  } catch {
    return '(not JSON)';
  }
}
