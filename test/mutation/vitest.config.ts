import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../vitest.config.js';
import { MUTATION_MODULES } from './modules.mjs';

/** The suite's own config, narrowed to one module's tests (ITO_MUTATION_MODULE) for a Stryker run. */
const name = process.env.ITO_MUTATION_MODULE ?? '';
const module = MUTATION_MODULES[name];
if (!module) throw new Error(`ITO_MUTATION_MODULE must name one of: ${Object.keys(MUTATION_MODULES).join(', ')}`);

export default mergeConfig(base, defineConfig({ test: { include: module.tests, reporters: ['default'] } }), false);
