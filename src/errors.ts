/** An error in what the user gave us: a file, a field or an argument. Exit code 2, no stack. */
export class InputError extends Error {
  constructor(
    readonly file: string,
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${file}${where ? `: ${where}` : ''}: ${problem}`);
    this.name = 'InputError';
  }
}

export function isInputError(e: unknown): e is InputError {
  return e instanceof InputError;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
