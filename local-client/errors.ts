/** Bad input from the user: a flag, an argument, a path (exit code 2, never a stack trace). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Another live process on this machine (`pid`) is polling the session: its poll lock
 * (poll/sidecar.ts) was refused. The CLI exits 8 for it (cli/exit-codes.ts).
 */
export class PollLockedError extends UsageError {
  constructor(
    readonly sessionId: string,
    readonly pid: number,
  ) {
    super(`Session ${sessionId} is already being polled on this machine by process ${pid}.`);
    this.name = "PollLockedError";
  }
}
