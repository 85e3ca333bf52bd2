/** The error of class `kind` that `run` rejects with; the test fails when it resolves or rejects with another error. */
export async function refusalOf<E extends Error>(kind: abstract new (...args: never[]) => E, run: () => Promise<unknown>): Promise<E> {
  try {
    await run();
  } catch (err) {
    if (err instanceof kind) return err;
    throw err;
  }
  throw new Error(`expected a ${kind.name}`);
}
