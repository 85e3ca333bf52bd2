import { defineConfig } from 'vitest/config';
import base from '../vitest.config.js';
import { MUTATION_MODULES } from './modules.mjs';

/**
 * The suite's own config, narrowed to one module's tests (ITO_MUTATION_MODULE) for a Stryker run. The include
 * list is replaced, not merged: mergeConfig concatenates arrays, which would run the whole suite per mutant.
 */
const name = process.env.ITO_MUTATION_MODULE ?? '';
const module = MUTATION_MODULES[name];
if (!module) throw new Error(`ITO_MUTATION_MODULE must name one of: ${Object.keys(MUTATION_MODULES).join(', ')}`);

// ITO_MUTATION_TESTS (comma-separated globs) narrows a run to some of the module's tests, e.g. its unit tests
// alone when the int tests would make the run too long; the report then gives a lower bound of the score.
const narrowed = process.env.ITO_MUTATION_TESTS?.split(',').filter(Boolean);

export default defineConfig({ ...base, test: { ...base.test, include: narrowed?.length ? narrowed : module.tests, reporters: ['default'] } });
