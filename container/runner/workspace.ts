import { createReadStream } from "node:fs";
import { chown, lstat, mkdir, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { WorkspaceFile } from "../../src/protocol/execution.ts";
import { recordBaseline, trackFiles } from "./git.ts";
import { ACTIVITY_FILE, COMMAND_GID, COMMAND_UID, GIT_DIR, WORKSPACE_DIR } from "./layout.ts";
import { tarMemberProblem, workspacePathProblem } from "./paths.ts";
import { endCommandProcesses } from "./processes.ts";
import { finish, succeed } from "./spawn.ts";

/** A request the runner refuses (a bad path, a bad tar): the caller's fault, said in a sentence. */
export class RefusedError extends Error {
  override readonly name = "RefusedError";
}

/**
 * Replaces the workspace with a tar's contents and records the git baseline. The tar is
 * listed first and refused whole if a member is absolute or climbs out with `..`; it is then
 * unpacked by the commands' own user, so even a tar that slipped something past the check
 * could write nowhere that user cannot.
 */
export async function fillWorkspace(tarFile: string): Promise<void> {
  const listing = await finish("tar", ["-t", "-f", "-"], { input: createReadStream(tarFile) });
  if (listing.code !== 0) {
    throw new RefusedError(`the workspace is not a readable tar: ${listing.stderr.trim()}`);
  }
  for (const name of listing.stdout.toString("utf8").split("\n")) {
    if (name === "") continue;
    const problem = tarMemberProblem(name);
    if (problem !== undefined) throw new RefusedError(`tar member ${name} ${problem}`);
  }
  await endCommandProcesses();
  await clearWorkspace();
  await succeed("tar", ["-x", "-f", "-", "-C", WORKSPACE_DIR, "--no-same-owner"], {
    input: createReadStream(tarFile),
    uid: COMMAND_UID,
    gid: COMMAND_GID,
    env: { PATH: "/usr/bin:/bin" },
  });
  await recordBaseline();
  await touchActivity();
}

/** Empties the workspace and forgets its baseline (a session's end). */
export async function clearWorkspace(): Promise<void> {
  for (const name of await readdir(WORKSPACE_DIR)) {
    await rm(join(WORKSPACE_DIR, name), { recursive: true, force: true });
  }
  await rm(GIT_DIR, { recursive: true, force: true });
}

/**
 * Writes (or deletes) the overlay's files before a command runs, as files of the commands'
 * user. A path through a symbolic link is refused: a command may have made `src` a link to
 * `/etc`, and the runner writes as root.
 */
export async function applyFiles(files: WorkspaceFile[]): Promise<void> {
  for (const file of files) {
    const problem = workspacePathProblem(file.path);
    if (problem !== undefined) throw new RefusedError(`file path ${file.path} ${problem}`);
  }
  for (const file of files) {
    const target = join(WORKSPACE_DIR, file.path);
    await refuseLinkedParents(file.path);
    const stat = await lstat(target).catch(() => undefined);
    // A regular file is rewritten in place, keeping its mode (an edited script stays
    // executable); a link or a directory where the file should be is replaced.
    const inPlace = stat?.isFile() === true && file.content !== null;
    if (stat !== undefined && !inPlace) {
      await rm(target, { recursive: stat.isDirectory(), force: true });
    }
    if (file.content === null) continue;
    await makeParents(file.path);
    await writeFile(target, file.content);
    await chown(target, COMMAND_UID, COMMAND_GID);
  }
  await trackFiles(files.filter((f) => f.content !== null).map((f) => f.path));
}

async function refuseLinkedParents(path: string): Promise<void> {
  const parts = path.split("/").slice(0, -1);
  let at = WORKSPACE_DIR;
  for (const part of parts) {
    at = join(at, part);
    const stat = await lstat(at).catch(() => undefined);
    if (stat === undefined) return;
    if (stat.isSymbolicLink()) {
      throw new RefusedError(`file path ${path} goes through the symbolic link ${part}`);
    }
    if (!stat.isDirectory()) await rm(at, { force: true });
  }
}

async function makeParents(path: string): Promise<void> {
  const parts = dirname(path) === "." ? [] : dirname(path).split("/");
  let at = WORKSPACE_DIR;
  for (const part of parts) {
    at = join(at, part);
    const made = await mkdir(at).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code === "EEXIST") return false;
        throw err;
      },
    );
    if (made) await chown(at, COMMAND_UID, COMMAND_GID);
  }
}

/** Marks the container as in use (`idle` counts quiet time from here). */
export async function touchActivity(): Promise<void> {
  const now = new Date();
  await utimes(ACTIVITY_FILE, now, now).catch(() => writeFile(ACTIVITY_FILE, ""));
}
