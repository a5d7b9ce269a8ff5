/** Bad input from the user: a flag, an argument, a path (exit code 2, never a stack trace). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
