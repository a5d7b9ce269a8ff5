import { UsageError } from "../errors.ts";

/**
 * A snapshot that cannot be built or would be refused by the server: the code matches the
 * server's where there is one (`payload_too_large`, `snapshot_too_large`,
 * `snapshot_too_many_files`), so the user hears the same thing before uploading as after.
 * A usage error: the CLI exits with code 2 and prints the message.
 */
export class SnapshotError extends UsageError {
  constructor(
    readonly code:
      | "not_a_directory"
      | "git_failed"
      | "payload_too_large"
      | "snapshot_too_large"
      | "snapshot_too_many_files",
    message: string,
  ) {
    super(message);
    this.name = "SnapshotError";
  }
}
