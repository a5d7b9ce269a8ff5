import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buildSnapshot, type SnapshotBuild } from "../../../local-client/snapshot/build.ts";
import { listTree } from "../../../local-client/snapshot/tree.ts";
import { isTextContent, SNAPSHOT_MAX_FILE_BYTES } from "../../../src/protocol/index.ts";
import type { Bm25Document } from "./bm25.ts";
import { GIT_MAX_BUFFER_BYTES } from "./mirrors.ts";

/**
 * A task's parent tree on disk, as a user would have it: the commit's files written out of
 * the mirror (`git archive | tar -x`), then made a git repository of one commit, so that the
 * planport snapshot takes its git path (`git ls-files`, .gitignore honoured) as it would in a
 * real checkout.
 */

const run = promisify(execFile);
const COMMIT_ENV = {
  GIT_AUTHOR_NAME: "planport bench",
  GIT_AUTHOR_EMAIL: "bench@localhost",
  GIT_COMMITTER_NAME: "planport bench",
  GIT_COMMITTER_EMAIL: "bench@localhost",
  GIT_CONFIG_NOSYSTEM: "1",
};

/** A materialised parent tree; `remove()` deletes it. */
export interface ParentTree {
  root: string;
  remove(): void;
}

/**
 * Writes `commit`'s tree out of `gitDir` into a new temporary folder and commits it there.
 * Blobs over the snapshot's file limit, and blobs the mirror lacks, are left out of the
 * archive: the snapshot would skip them anyway (a mirror may keep no large blob at all).
 *
 * @example
 * const tree = await materialiseTree("/work/.mirror/tj+commander.js/repo", parentSha);
 * try { … } finally { tree.remove(); }
 */
export async function materialiseTree(gitDir: string, commit: string): Promise<ParentTree> {
  const root = mkdtempSync(join(tmpdir(), "planport-bench-tree-"));
  const remove = () => rmSync(root, { recursive: true, force: true });
  try {
    const large = await largeBlobs(gitDir, commit);
    const pathspecs = large.map((path) => `:(exclude,literal)${path}`);
    await archiveInto(gitDir, commit, root, pathspecs.length > 0 ? [".", ...pathspecs] : []);
    const inTree = {
      cwd: root,
      env: { ...process.env, ...COMMIT_ENV },
      maxBuffer: GIT_MAX_BUFFER_BYTES,
    };
    await run("git", ["init", "-q", "-b", "main"], inTree);
    // -f: every archived file was tracked upstream, even one its own .gitignore matches.
    await run("git", ["add", "-A", "-f"], inTree);
    await run(
      "git",
      ["commit", "-q", "--no-verify", "--no-gpg-sign", "-m", `parent ${commit}`],
      inTree,
    );
    return { root, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

async function largeBlobs(gitDir: string, commit: string): Promise<string[]> {
  const { stdout } = await run("git", ["-C", gitDir, "ls-tree", "-r", "-l", "-z", commit], {
    maxBuffer: GIT_MAX_BUFFER_BYTES,
    encoding: "utf8",
  });
  const large: string[] = [];
  for (const entry of stdout.split("\0")) {
    // "<mode> blob <sha> <size>\t<path>"
    const tab = entry.indexOf("\t");
    if (tab === -1) continue;
    const fields = entry.slice(0, tab).trim().split(/\s+/);
    if (fields[1] !== "blob") continue;
    // "BAD": the mirror lacks the blob (it keeps none of 4 MiB and more).
    const size = Number(fields[3]);
    if (!(size <= SNAPSHOT_MAX_FILE_BYTES)) large.push(entry.slice(tab + 1));
  }
  return large;
}

async function archiveInto(
  gitDir: string,
  commit: string,
  root: string,
  pathspecs: readonly string[],
): Promise<void> {
  const archive = spawn("git", ["-C", gitDir, "archive", "--format=tar", commit, ...pathspecs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tar = spawn("tar", ["-x", "-C", root], { stdio: ["pipe", "ignore", "pipe"] });
  archive.stdout.pipe(tar.stdin);
  let errors = "";
  const collect = (chunk: Buffer) => {
    errors += chunk.toString();
  };
  archive.stderr.on("data", collect);
  tar.stderr.on("data", collect);
  const exitOf = (child: ReturnType<typeof spawn>) =>
    new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", resolve);
    });
  const [archiveCode, tarCode] = await Promise.all([exitOf(archive), exitOf(tar)]);
  if (archiveCode !== 0 || tarCode !== 0) {
    throw new Error(
      `git archive ${commit} | tar -x failed (exit ${archiveCode}/${tarCode}): ${errors.trim()}`,
    );
  }
}

/** The snapshot of a tree and the paths it holds. */
export interface TreeSnapshot {
  build: SnapshotBuild;
  /** Every path the snapshot holds (what a plan may name as an existing file). */
  files: Set<string>;
}

/** Builds the planport snapshot of `root` and lists the files it holds. */
export async function snapshotTree(root: string): Promise<TreeSnapshot> {
  const build = await buildSnapshot(root);
  const skipped = new Set(build.skipped.map((entry) => entry.path));
  const listing = await listTree(root);
  return { build, files: new Set(listing.paths.filter((path) => !skipped.has(path))) };
}

/** The snapshot's files as BM25 documents (every one is text: the snapshot holds only text). */
export function readDocuments(root: string, files: Iterable<string>): Bm25Document[] {
  const documents: Bm25Document[] = [];
  for (const path of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(root, path));
    } catch {
      continue;
    }
    if (!isTextContent(bytes)) continue;
    documents.push({ path, content: bytes.toString("utf8") });
  }
  return documents;
}
