import { ok, type Result, type SnapshotReceipt } from "../protocol/index.ts";
import { type IngestError, IngestFailure, snapshotTooLarge } from "./errors.ts";
import type { CommitOutcome } from "./registry.ts";

/**
 * The answer to a commit of a tree (either upload path): the receipt, or the refusal. Blobs
 * that went missing between their upload and the commit (the garbage collector dropped them:
 * docs/DESIGN.md "Incremental snapshots") are a 409 `blobs_missing` listing them.
 */
export function committed(outcome: CommitOutcome): Result<SnapshotReceipt, IngestError> {
  switch (outcome.kind) {
    case "stored":
    case "existed":
      return ok(outcome.receipt);
    case "too_large":
      throw snapshotTooLarge();
    case "missing":
      throw new IngestFailure({
        status: 409,
        code: "blobs_missing",
        message: `${outcome.missing.length} of the tree's blobs are not stored; send them with POST /v1/blobs and commit the manifest again.`,
        missing: outcome.missing,
      });
  }
}
