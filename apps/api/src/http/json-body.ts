import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ItoError, NO_VOCABULARY, parseStrictJson, renderJsonPath, type Vocabulary } from '@ito/contracts';

/** What a route tells the body parser: the names its body schema defines, so a refused key can be named. */
export interface BodyRouteConfig {
  bodyVocabulary?: Vocabulary;
  /** The route reads its body's JSON text back ({@link bodyTextOf}): a hot route with a hand-written check. */
  keepsBodyText?: boolean;
}

/** Each parsed body's JSON text, for a hot route that can use the bytes as sent (kept while the body lives). */
const bodyTexts = new WeakMap<object, string>();

/** The JSON text `body` was parsed from, when it is a parsed request body (an object) and not a copy. */
export function bodyTextOf(body: unknown): string | undefined {
  return typeof body === 'object' && body !== null ? bodyTexts.get(body) : undefined;
}

function vocabularyFor(req: FastifyRequest): Vocabulary {
  return (req.routeOptions.config as BodyRouteConfig | undefined)?.bodyVocabulary ?? NO_VOCABULARY;
}

/**
 * Every request body is read by the strict parser, for every route at once (agent routes included): one meaning
 * per body (no duplicate or prototype keys), bounded nesting, no U+0000, and a refusal by line, column and path
 * that never quotes the body. JSON is the only body type: anything else is refused by Fastify as 415.
 */
export function installStrictJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(new ItoError('validation_failed', 'the request body is empty; send a JSON object or no Content-Type'), undefined);
    const parsed = parseStrictJson(text);
    if (parsed.ok) {
      if (typeof parsed.value === 'object' && parsed.value !== null && (req.routeOptions.config as BodyRouteConfig | undefined)?.keepsBodyText) {
        bodyTexts.set(parsed.value, text);
      }
      return done(null, parsed.value);
    }
    const path = renderJsonPath(parsed.error.path, vocabularyFor(req));
    done(new ItoError('validation_failed', `the request body is not accepted as JSON: ${parsed.error.message} (at ${path})`, { path, reason: parsed.error.reason }), undefined);
  });
}
