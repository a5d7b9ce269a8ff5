import type { Env } from "../env.ts";
import type { BlobRegistry, CommitOutcome } from "../snapshot/index.ts";

/** The owner index of an owner. */
export function ownerIndexStub(env: Env, owner: string) {
  return env.OWNERS.get(env.OWNERS.idFromName(owner));
}

/**
 * The owner's blobs and snapshots (kept by the owner index) as the snapshot module sees them.
 *
 * @example
 * await ingestBlobs(env.SNAPSHOTS, snapshotRegistry(env, owner), owner, body);
 */
export function snapshotRegistry(env: Env, owner: string): BlobRegistry {
  const index = ownerIndexStub(env, owner);
  return {
    missingBlobs: (ids) => index.missingBlobs(ids),
    addBlobs: (blobs) => index.addBlobs(blobs),
    commitSnapshot: async (id, files, skipped) =>
      (await index.commitSnapshot(owner, id, files, skipped)) as CommitOutcome,
    hasSnapshot: (id) => index.hasSnapshot(owner, id),
  };
}
