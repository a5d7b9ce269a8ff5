import type { Api } from "../http/api.ts";
import {
  baseCachePath,
  knownBinaryPath,
  loadBase,
  loadKnownBinary,
  saveBase,
  saveKnownBinary,
} from "./base.ts";
import { type CollectedTree, collectTree, type SnapshotProgress } from "./build.ts";
import { packLevelFor } from "./pack-level.ts";
import { type SentSnapshot, sendSnapshot } from "./send.ts";

/**
 * `planport plan`'s snapshot, start to end (docs/DESIGN.md "Incremental snapshots"): collect the
 * tree (while the connection is being made), then send what the server lacks against the last
 * snapshot of this repository, and remember the new one. The only module that touches the
 * remembered state.
 */

export interface SnapshotUploadOptions {
  onProgress?: (progress: SnapshotProgress) => void;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

/**
 * Collects the tree at `root`. Needs no server: start it before connecting.
 *
 * @example
 * const collecting = collectRepository(root, { onProgress });
 * const sent = await uploadRepository(api, { server, token }, await collecting);
 */
export function collectRepository(
  root: string,
  options: SnapshotUploadOptions = {},
): Promise<CollectedTree> {
  const knownBinary = loadKnownBinary(knownBinaryPath(root, options.env));
  return collectTree(root, { ...options, knownBinary });
}

/** Sends a collected tree to `server` and remembers it as the next upload's base. */
export async function uploadRepository(
  api: Api,
  who: { server: string; token: string },
  tree: CollectedTree,
  options: SnapshotUploadOptions = {},
): Promise<SentSnapshot> {
  const basePath = baseCachePath({ ...who, root: tree.root }, options.env);
  const sent = await sendSnapshot(api, tree, {
    ...options,
    base: loadBase(basePath),
    packLevel: packLevelFor(who.server),
  });
  saveBase(basePath, sent.base);
  saveKnownBinary(knownBinaryPath(tree.root, options.env), sent.binary);
  return sent;
}
