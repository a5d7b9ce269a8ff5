import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  CHANGE_MAX_BYTES,
  type FileChange,
  type RunRequest,
  type RunResult,
} from "../../src/protocol/execution.ts";
import { byPath, changeContent, parseRawDiff, type RawChange } from "./changes.ts";
import { runCommand } from "./command.ts";
import { diffTrees, hasBaseline, snapshotTree } from "./git.ts";
import { CHANGES_MAX_TOTAL_BYTES, WORKSPACE_DIR } from "./layout.ts";
import { endCommandProcesses } from "./processes.ts";
import { applyFiles, touchActivity } from "./workspace.ts";

/** The session has no workspace here (never sent, or this container is new): send it first. */
export class WorkspaceMissingError extends Error {
  override readonly name = "WorkspaceMissingError";
}

/**
 * One run: the overlay's files written, the tree named, the command run, the tree named again,
 * and what changed between the two read back.
 *
 * @example
 * await runInWorkspace({ command: "npm test", timeout_ms: 120_000, files: [] })
 */
export async function runInWorkspace(request: RunRequest): Promise<RunResult> {
  if (!(await hasBaseline())) {
    throw new WorkspaceMissingError("this session has no workspace: send it first");
  }
  await touchActivity();
  await applyFiles(request.files);
  const before = await snapshotTree();
  const end = await runCommand(request.command, request.timeout_ms);
  await endCommandProcesses();
  const after = await snapshotTree();
  const changes = await readChanges(parseRawDiff(await diffTrees(before, after)));
  await touchActivity();
  return { ...end, changes };
}

/** The changes with their new contents, within the per-file and per-run limits. */
async function readChanges(raw: RawChange[]): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  let carried = 0;
  // Nested repositories (a command's `git clone`) are not files of the session.
  for (const change of raw.filter((c) => c.mode !== "160000").sort(byPath)) {
    if (change.kind === "deleted") {
      changes.push({ path: change.path, kind: "deleted" });
      continue;
    }
    const content = await readContent(change, CHANGES_MAX_TOTAL_BYTES - carried);
    if ("content" in content) carried += Buffer.byteLength(content.content);
    changes.push({ path: change.path, kind: change.kind, ...content });
  }
  return changes;
}

async function readContent(
  change: RawChange,
  room: number,
): Promise<{ content: string } | { skipped: "binary" | "too_large" }> {
  // A symbolic link has no text content the session's overlay could hold.
  if (change.mode === "120000") return { skipped: "binary" };
  const path = join(WORKSPACE_DIR, change.path);
  const stat = await lstat(path);
  if (stat.size > Math.min(CHANGE_MAX_BYTES, room)) return { skipped: "too_large" };
  return changeContent(await readFile(path));
}
