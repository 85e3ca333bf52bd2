/**
 * The manifest names a parameter count, not an architecture. Dense decoder-only transformers hold about
 * 12·L·h² parameters, and well-tuned ones keep h/L near 128 (Llama 3 8B: 4096/32, 405B: 16384/126), so the
 * planner recovers a hidden size and a layer count from N alone. Good to ~10%, which is what memory and
 * attention-FLOP estimates need.
 */
export interface ModelShape {
  parameters: number;
  hidden: number;
  layers: number;
  vocabulary: number;
}

const HIDDEN_PER_LAYER = 128;

export function estimateShape(parameters: number, vocabulary: number): ModelShape {
  const rawHidden = Math.cbrt((parameters * HIDDEN_PER_LAYER) / 12);
  const hidden = Math.max(HIDDEN_PER_LAYER, Math.round(rawHidden / HIDDEN_PER_LAYER) * HIDDEN_PER_LAYER);
  const layers = Math.max(2, Math.round(hidden / HIDDEN_PER_LAYER));
  return { parameters, hidden, layers, vocabulary };
}
