/** A bench's command line: `--json`, `--small` (a quick run), and `--name value` options with their defaults. */
export function benchArgs(argv: readonly string[] = process.argv.slice(2)) {
  const opt = (name: string, dflt: string): string => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
  };
  return { args: argv, json: argv.includes('--json'), small: argv.includes('--small'), opt };
}
