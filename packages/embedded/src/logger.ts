/**
 * The slice of a pino logger this package uses. Declared structurally so the package needs no logging
 * dependency; a pino `Logger` satisfies it.
 */
export interface EmbeddedLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: EmbeddedLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
