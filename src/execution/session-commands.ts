import type { SessionCommands } from "../planner/port.ts";
import type { RunResult, WorkspaceFile } from "../protocol/index.ts";
import type { SnapshotFiles } from "../snapshot/files.ts";
import type { ExecutorClient } from "./client.ts";
import { snapshotTar } from "./workspace.ts";

/**
 * A session's commands, run by its executor over one tree: the snapshot (sent once, when the
 * executor has no workspace for the session — the first command, or after its container was
 * reaped) with the overlay's edits so far (sent with every command, so Edit/Write and commands
 * always see each other's work).
 *
 * @example
 * const commands = sessionCommands(client, "ses_1", port.snapshot, () => overlayFiles(port));
 * const result = await commands.run("npm test", 120_000);
 */
export function sessionCommands(
  client: ExecutorClient,
  sessionId: string,
  snapshot: SnapshotFiles,
  overlay: () => WorkspaceFile[],
): SessionCommands {
  return {
    where: client.where,
    async run(command: string, timeoutMs: number): Promise<RunResult> {
      const request = () => ({ command, timeout_ms: timeoutMs, files: overlay() });
      const first = await client.run(sessionId, request());
      if (first.kind === "ran") return first.result;
      await client.putWorkspace(sessionId, snapshotTar(snapshot));
      const second = await client.run(sessionId, request());
      if (second.kind === "ran") return second.result;
      throw new Error(
        `${client.where} lost the session's workspace right after it was sent; the command did not run.`,
      );
    },
  };
}
