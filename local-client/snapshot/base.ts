import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { BLOB_ID_PATTERN, SNAPSHOT_ID_PATTERN } from "../../src/protocol/index.ts";
import { dataDir, writePrivateFile } from "../home.ts";
import type { CollectedTree } from "./build.ts";

/**
 * The last snapshot this machine committed for a repository, per server and token: the base the
 * next upload is expressed against (docs/DESIGN.md "Incremental snapshots"), so after one edit
 * only that file's blob and a one-line manifest change are sent. Pure delta logic, plus the
 * file it is kept in (`$XDG_DATA_HOME/planport/snapshots/<key>.json`, mode 0600; the key hashes
 * server, token and repository path, so no token is written).
 */

export interface SnapshotBase {
  /** The snapshot id the server stored. */
  id: string;
  /** path → blob id of its files. */
  files: Map<string, string>;
}

/** What a new tree adds to its base: the new or changed files, the removed paths, and the blobs to ask about. */
export interface ManifestDelta {
  changed: [string, string][];
  removed: string[];
  /** Distinct blob ids of `changed` the base does not have: the only ones the server may lack. */
  candidates: string[];
}

/**
 * The difference from `base` to `tree` (pure). Without a base, every file is "changed" and
 * every distinct blob a candidate.
 *
 * @example
 * manifestDelta(base, tree) // { changed: [["src/a.ts", "1f…"]], removed: [], candidates: ["1f…"] }
 */
export function manifestDelta(base: SnapshotBase | null, tree: CollectedTree): ManifestDelta {
  const known = new Set(base?.files.values() ?? []);
  const changed: [string, string][] = [];
  const candidates = new Set<string>();
  const present = new Set<string>();
  for (const { path, blob } of tree.files) {
    present.add(path);
    if (base?.files.get(path) === blob) continue;
    changed.push([path, blob]);
    if (!known.has(blob)) candidates.add(blob);
  }
  const removed = base === null ? [] : [...base.files.keys()].filter((path) => !present.has(path));
  return { changed, removed, candidates: [...candidates] };
}

const BlobIdSchema = z.string().regex(BLOB_ID_PATTERN);
const BaseFileSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(SNAPSHOT_ID_PATTERN),
  files: z.array(z.tuple([z.string(), BlobIdSchema])),
});
const BinaryFileSchema = z.object({ version: z.literal(1), blobs: z.array(BlobIdSchema) });

/** Most blob ids of binary files remembered per repository (the newest are kept). */
const KNOWN_BINARY_MAX = 20_000;

/** Where the base of `root` on `server` with `token` is kept. */
export function baseCachePath(
  key: { server: string; token: string; root: string },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const name = createHash("sha256")
    .update(`${key.server}\0${key.token}\0${key.root}`)
    .digest("hex")
    .slice(0, 32);
  return join(dataDir(env), "snapshots", `${name}.json`);
}

/**
 * Where the blob ids of a repository's tracked binary files are kept: files skipped as binary
 * while git keeps their id are not read again (they never reach the server, so only this
 * machine can remember them). Per repository path, for any server.
 */
export function knownBinaryPath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const name = createHash("sha256").update(root).digest("hex").slice(0, 32);
  return join(dataDir(env), "snapshots", `${name}.binary.json`);
}

/** The kept base, or null when there is none or the file is not one (it is then ignored). */
export function loadBase(path: string): SnapshotBase | null {
  const parsed = BaseFileSchema.safeParse(readJsonFile(path));
  if (!parsed.success) return null;
  return { id: parsed.data.id, files: new Map(parsed.data.files) };
}

/** Keeps `base` (atomically; a failure to write only costs the next upload its delta). */
export function saveBase(path: string, base: SnapshotBase): void {
  writeQuietly(path, { version: 1, id: base.id, files: [...base.files] });
}

export function loadKnownBinary(path: string): Set<string> {
  const parsed = BinaryFileSchema.safeParse(readJsonFile(path));
  return new Set(parsed.success ? parsed.data.blobs : []);
}

export function saveKnownBinary(path: string, blobs: ReadonlySet<string>): void {
  writeQuietly(path, { version: 1, blobs: [...blobs].slice(-KNOWN_BINARY_MAX) });
}

function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

function writeQuietly(path: string, body: unknown): void {
  try {
    writePrivateFile(path, JSON.stringify(body));
  } catch {
    // A read-only home: the next upload reads more and sends the whole manifest instead.
  }
}
