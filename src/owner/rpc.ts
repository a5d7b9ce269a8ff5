import type { ManifestFile, SkippedEntry } from "../protocol/index.ts";
import type { CommitOutcome, NewBlob } from "../snapshot/index.ts";
import type { GroupClaim } from "./group-choices.ts";

/**
 * What the rest of the worker may ask an owner's index over RPC, declared apart from the class
 * (owner-index.ts `implements` it): the worker's `Env` and the session object's code read this,
 * never the class, so nothing the index imports has to import the index back.
 */
export interface OwnerIndexRpc extends Rpc.DurableObjectBranded {
  missingBlobs(ids: string[]): string[];
  addBlobs(blobs: NewBlob[]): Promise<{ stored: number; bytes: number }>;
  commitSnapshot(
    owner: string,
    id: string,
    files: ManifestFile[],
    skipped: SkippedEntry[],
  ): Promise<CommitOutcome>;
  hasSnapshot(owner: string, id: string): Promise<boolean>;
  blobStats(): { blobs: number; unused: number; packs: number };
  add(
    sessionId: string,
    snapshotId: string | null,
    createdAtMs: number,
    group?: string | null,
    owner?: string,
  ): Promise<NotRegistered | null>;
  remove(sessionId: string): void;
  listGroup(group: string, limit: number, before?: string): SessionIdPage;
  groupMembers(sessionId: string): { group: string; ids: string[] } | null;
  claimGroup(sessionId: string): Promise<GroupClaim>;
  releaseGroup(sessionId: string): void;
  settleGroup(sessionId: string): Promise<void>;
  list(limit: number, before?: string): SessionIdPage;
  addAwaiting(sessionId: string, requester: string, createdAtMs: number): void;
  dropAwaiting(sessionIds: string[]): void;
  listAwaiting(limit: number, before?: string): SessionIdPage;
  snapshotsInUse(): string[];
  dropSession(owner: string, sessionId: string): Promise<void>;
  releaseSnapshot(sessionId: string): Promise<void>;
}

/** A page of session ids, newest first. */
export interface SessionIdPage {
  ids: string[];
  hasMore: boolean;
}

/**
 * Why a session could not be registered: its group already chose another session's plan, or
 * its snapshot is not stored (never uploaded, or being purged).
 */
export type NotRegistered = { chosen: string } | { unknownSnapshot: true };
