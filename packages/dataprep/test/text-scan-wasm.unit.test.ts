import { readFileSync, writeFileSync } from 'node:fs';
import wabt from 'wabt';
import { describe, expect, it } from 'vitest';

/** The package's WebAssembly modules: each `.wat` is the source, and a generated TypeScript file carries its binary. */
const MODULES = [
  { wat: 'text-scan.wat', generated: 'text-scan-wasm.generated.ts', name: 'TEXT_SCAN_WASM' },
  { wat: 'fingerprint.wat', generated: 'fingerprint-wasm.generated.ts', name: 'FINGERPRINT_WASM' },
] as const;

/** The module a `.wat` assembles to, as the TypeScript source that carries it. */
async function rendered(wat: string, name: string): Promise<string> {
  const tools = await wabt();
  const module = tools.parseWat(wat, readFileSync(new URL(`../src/${wat}`, import.meta.url), 'utf8'), { simd: true });
  try {
    module.validate();
    const { buffer } = module.toBinary({});
    return [
      `// Generated from ./${wat} by \`npm run wasm:dataprep\`; do not edit.`,
      `/** The WebAssembly module of ./${wat}, base64. */`,
      `export const ${name} = '${Buffer.from(buffer).toString('base64')}';`,
      '',
    ].join('\n');
  } finally {
    module.destroy();
  }
}

describe('the data prep WebAssembly modules', () => {
  for (const { wat, generated, name } of MODULES) {
    it(`${generated} is the assembly of ${wat} (npm run wasm:dataprep writes it)`, async () => {
      const text = await rendered(wat, name);
      const target = new URL(`../src/${generated}`, import.meta.url);
      if (process.env.ITO_WRITE_WASM === '1') writeFileSync(target, text);
      expect(readFileSync(target, 'utf8')).toBe(text);
    });
  }
});
