import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { fail, ok } from '@ito/contracts';
import { expectedAnswers, watchAnswersAgainstDocument } from '../src/http/answer-conformance.js';

const narrowed = (codes: string[]) => ({
  content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/ErrorEnvelope' }, { properties: { error: { properties: { code: { enum: codes } } } } }] } } },
});
const doc = {
  paths: {
    '/v1/runs/{id}': { get: { responses: { '200': { content: {} }, '404': narrowed(['not_found']) } } },
  },
};

async function serverAnswering(status: number, body: unknown) {
  const app = Fastify();
  const violations: string[] = [];
  const documentIs = watchAnswersAgainstDocument(app, (v) => violations.push(v));
  app.get('/v1/runs/:id', async (_req, reply) => reply.code(status).send(body));
  app.get('/v1/undocumented', async () => ok({}));
  documentIs(doc);
  await app.ready();
  return { app, violations };
}

describe('answers checked against the OpenAPI document', () => {
  it('reads each operation’s statuses and the codes of its refusals', () => {
    const expected = expectedAnswers(doc).get('GET /v1/runs/:id')!;
    expect([...expected.keys()]).toEqual([200, 404]);
    expect(expected.get(200)).toBeNull();
    expect([...expected.get(404)!]).toEqual(['not_found']);
  });

  it('stays quiet on a documented answer and on a route the document does not cover', async () => {
    const { app, violations } = await serverAnswering(404, fail('not_found', 'no such run'));
    await app.inject({ method: 'GET', url: '/v1/runs/run_1' });
    await app.inject({ method: 'GET', url: '/v1/undocumented' });
    expect(violations).toEqual([]);
    await app.close();
  });

  it('reports a status the operation does not list, and a code its status does not list', async () => {
    const wrongStatus = await serverAnswering(409, fail('invalid_state', 'no'));
    await wrongStatus.app.inject({ method: 'GET', url: '/v1/runs/run_1' });
    expect(wrongStatus.violations).toEqual(['GET /v1/runs/:id answered 409, which its OpenAPI operation does not list']);
    await wrongStatus.app.close();

    const wrongCode = await serverAnswering(404, fail('booking_not_found', 'no'));
    await wrongCode.app.inject({ method: 'GET', url: '/v1/runs/run_1' });
    expect(wrongCode.violations).toEqual(['GET /v1/runs/:id answered 404 booking_not_found, which its OpenAPI operation does not list at 404']);
    await wrongCode.app.close();
  });
});
