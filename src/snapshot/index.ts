import type { SnapshotFiles } from "../planner/port.ts";
import type { SnapshotReceipt } from "../protocol/index.ts";

/**
 * Repository snapshots: ingest of an uploaded tar.gz into R2 (packs + file index), the
 * per-owner existence check, read access for the planner's tools, and deletion.
 * (Implementation lands under issue 2; signatures are fixed for the routes and the session.)
 */

export type IngestError = {
  status: 400 | 413;
  code: "invalid_body" | "payload_too_large" | "snapshot_too_large" | "snapshot_too_many_files";
  message: string;
};

export async function ingestSnapshot(
  _bucket: R2Bucket,
  _owner: string,
  _body: ReadableStream<Uint8Array>,
): Promise<{ ok: true; receipt: SnapshotReceipt } | { ok: false; error: IngestError }> {
  throw new Error("snapshot ingest is not built yet");
}

export async function snapshotExists(
  _bucket: R2Bucket,
  _owner: string,
  _id: string,
): Promise<boolean> {
  throw new Error("snapshot lookup is not built yet");
}

export function openSnapshot(_bucket: R2Bucket, _owner: string, _id: string): SnapshotFiles {
  throw new Error("snapshot reader is not built yet");
}

export async function deleteSnapshot(
  _bucket: R2Bucket,
  _owner: string,
  _id: string,
): Promise<void> {
  throw new Error("snapshot deletion is not built yet");
}
