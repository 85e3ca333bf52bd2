import { describe, expect, it } from 'vitest';
import { estimateShape, vocabularyFor } from '@ito/planner';

/**
 * Published architectures (the models' own configuration files), not the heuristic's output: the estimate
 * from the parameter count alone must land within the 10 % the planner's memory and FLOP figures rely on.
 */
const LLAMA_3_8B = { hidden: 4096, layers: 32, heads: 32, kvHeads: 8, ffn: 14336, vocabulary: 128_256 };
const LLAMA_3_405B = { hidden: 16384, layers: 126, heads: 128, kvHeads: 8, ffn: 53248, vocabulary: 128_256 };

/** Parameters of a Llama-style decoder from its shape: GQA attention, SwiGLU FFN, untied embeddings. */
function parametersOf(s: typeof LLAMA_3_8B): number {
  const kv = (s.hidden / s.heads) * s.kvHeads;
  const attention = 2 * s.hidden * s.hidden + 2 * s.hidden * kv;
  const ffn = 3 * s.hidden * s.ffn;
  const norms = 2 * s.hidden;
  return s.layers * (attention + ffn + norms) + 2 * s.vocabulary * s.hidden + s.hidden;
}

const within = (actual: number, published: number, fraction: number) => Math.abs(actual - published) / published <= fraction;

describe('estimateShape against published model shapes', () => {
  it('counts Llama-3-8B at its published 8.03 B parameters (the check on the shape arithmetic itself)', () => {
    expect(parametersOf(LLAMA_3_8B)).toBe(8_030_261_248);
  });

  it.each([
    ['Llama-3-8B', LLAMA_3_8B],
    ['Llama-3.1-405B', LLAMA_3_405B],
  ])('recovers %s hidden size and layer count within a tenth from its parameter count', (_name, shape) => {
    const est = estimateShape(parametersOf(shape), shape.vocabulary);
    expect(within(est.hidden, shape.hidden, 0.1), `hidden ${est.hidden} vs ${shape.hidden}`).toBe(true);
    expect(within(est.layers, shape.layers, 0.1), `layers ${est.layers} vs ${shape.layers}`).toBe(true);
    expect(est.hidden % 128).toBe(0);
    expect(est).toMatchObject({ parameters: parametersOf(shape), vocabulary: shape.vocabulary });
  });

  it('uses the published Llama 3 vocabulary for the llama family', () => {
    expect(vocabularyFor('llama')).toBe(LLAMA_3_8B.vocabulary);
  });
});
