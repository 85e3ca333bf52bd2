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

export default defineConfig({ ...base, test: { ...base.test, include: module.tests, reporters: ['default'] } });
