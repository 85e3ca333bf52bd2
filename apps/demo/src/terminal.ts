/**
 * What the demo prints. Colour only on a terminal with NO_COLOR unset; a line of its own first clears a
 * progress line the CLI may have drawn in place, so the two never overprint each other.
 */
export interface Terminal {
  heading(text: string): void;
  command(text: string): void;
  say(text: string): void;
  ok(text: string): void;
  failure(text: string): void;
}

const CODES = { bold: '1', dim: '2', red: '31', green: '32', yellow: '33', cyan: '36' } as const;

export function terminal(out: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): Terminal {
  const tty = out.isTTY === true;
  const colour = tty && !env.NO_COLOR;
  const paint = (style: keyof typeof CODES, text: string) => (colour ? `\u001b[${CODES[style]}m${text}\u001b[0m` : text);
  // On a terminal the CLI's progress line has no newline yet: clear it before writing over it.
  const line = (text: string) => out.write(`${tty ? '\r\u001b[2K' : ''}${text}\n`);
  return {
    heading: (text) => line(`\n${paint('bold', `▌ ${text}`)}`),
    command: (text) => line(paint('cyan', `$ ${text}`)),
    say: (text) => line(`  ${text}`),
    ok: (text) => line(`  ${paint('green', '✓')} ${text}`),
    failure: (text) => line(paint('red', `✗ ${text}`)),
  };
}
