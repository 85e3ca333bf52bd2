import { readFileSync, writeFileSync } from 'node:fs';
import wabt from 'wabt';
import { describe, expect, it } from 'vitest';

const SOURCE = new URL('../src/text-scan.wat', import.meta.url);
const GENERATED = new URL('../src/text-scan-wasm.generated.ts', import.meta.url);

/** The module ./text-scan.wat assembles to, as the TypeScript source that carries it. */
async function rendered(): Promise<string> {
  const tools = await wabt();
  const module = tools.parseWat('text-scan.wat', readFileSync(SOURCE, 'utf8'), { simd: true });
  try {
    module.validate();
    const { buffer } = module.toBinary({});
    return [
      '// Generated from ./text-scan.wat by `npm run wasm:dataprep`; do not edit.',
      '/** The WebAssembly module of ./text-scan.wat, base64. */',
      `export const TEXT_SCAN_WASM = '${Buffer.from(buffer).toString('base64')}';`,
      '',
    ].join('\n');
  } finally {
    module.destroy();
  }
}

describe('the text scan module', () => {
  it('is the assembly of text-scan.wat (npm run wasm:dataprep writes it)', async () => {
    const text = await rendered();
    if (process.env.ITO_WRITE_WASM === '1') writeFileSync(GENERATED, text);
    expect(readFileSync(GENERATED, 'utf8')).toBe(text);
  });
});
