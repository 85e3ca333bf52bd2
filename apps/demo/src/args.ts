export interface DemoOptions {
  port: number;
  /** Simulated seconds per wall second: the example's ~80 planned hours pass in about half a minute. */
  timeScale: number;
  heartbeatIntervalS: number;
  keepRunning: boolean;
  /** Restart the pulled node's agent once its loss is recorded (the node rebooted), so it serves later stages. */
  bringBack: boolean;
  watchTimeoutMs: number;
}

export const DEMO_USAGE = `npm run demo [-- --keep-running] [--port <n>] [--time-scale <n>]

Starts Itô Training on the embedded default under $ITO_HOME (default ~/.ito), creates a tenant, a booking of
2 × 8 H200 and two simulated node agents, and walks a training run through the real CLI, pulling one node
mid-training. Leaves the data in $ITO_HOME.

  --keep-running     keep the system up at the end (Ctrl-C stops it)
  --port <n>         the API's port (default ITO_PORT or 8420)
  --time-scale <n>   simulated seconds per wall second (default 10000)`;

export type ParsedArgs = { help: true } | { help: false; options: DemoOptions } | { help: false; error: string };

/** Flags only; a bad one is named, never its value. */
export function parseDemoArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): ParsedArgs {
  const options: DemoOptions = { port: 8420, timeScale: 10000, heartbeatIntervalS: 2, keepRunning: false, bringBack: true, watchTimeoutMs: 240_000 };
  const envPort = env.ITO_PORT?.trim();
  if (envPort) {
    const port = positiveInt(envPort, 65535);
    if (port === null) return { help: false, error: 'ITO_PORT must be a port number' };
    options.port = port;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { help: true };
    if (arg === '--keep-running') options.keepRunning = true;
    else if (arg === '--port' || arg === '--time-scale') {
      const value = argv[++i];
      const n = value === undefined ? null : positiveInt(value, arg === '--port' ? 65535 : 1_000_000);
      if (n === null) return { help: false, error: `${arg} needs a positive whole number` };
      if (arg === '--port') options.port = n;
      else options.timeScale = n;
    } else return { help: false, error: 'unknown flag (npm run demo -- --help lists them)' };
  }
  return { help: false, options };
}

function positiveInt(text: string, max: number): number | null {
  if (!/^[0-9]{1,7}$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= max ? n : null;
}
