/**
 * A mistake the user can act on (bad input file, bad flag, unreachable database).
 * The CLI prints `message` alone (no stack trace) and exits with `exitCode`.
 * Messages name the file, the entry (line, index or id) and the field, and what was expected.
 */
export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}

export function isUserError(e: unknown): e is UserError {
  return e instanceof Error && e.name === 'UserError' && typeof (e as UserError).exitCode === 'number';
}
