import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export interface DemoPaths {
  root: string;
  home: string;
  exampleManifest: string;
}

/** The repository this demo was built in, and the ITO_HOME it leaves its data in (`~/.ito` by default). */
export function demoPaths(env: NodeJS.ProcessEnv = process.env): DemoPaths {
  const root = resolve(import.meta.dirname, '..', '..', '..');
  const fromEnv = env.ITO_HOME?.trim();
  const home = fromEnv ? (isAbsolute(fromEnv) ? fromEnv : resolve(fromEnv)) : join(homedir(), '.ito');
  return { root, home, exampleManifest: join(root, 'examples', 'manifest.json') };
}

/** The built entry points the demo runs, exactly as `npx` would. */
export function entries(root: string) {
  return {
    server: join(root, 'apps/server/dist/main.js'),
    agent: join(root, 'apps/agent/dist/main.js'),
    ito: join(root, 'apps/cli/dist/ito.js'),
    admin: join(root, 'apps/cli/dist/ito-admin.js'),
  };
}
