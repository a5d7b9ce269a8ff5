/**
 * What a stored snapshot offers its readers (the planner's tools, the diff of remote
 * execution). The snapshot module defines it and implements it over R2; the planning engine
 * takes it through its port, so the engine never learns where files live.
 */

/** A file of the uploaded repository snapshot. */
export interface SnapshotEntry {
  /** Relative POSIX path inside the repository, no leading `./` or `/`. */
  path: string;
  size: number;
}

/** Read access to the repository snapshot (R2 packs + file index). */
export interface SnapshotFiles {
  /** Every file, sorted by path. Empty when the session has no snapshot. */
  list(): Promise<readonly SnapshotEntry[]>;
  /** A file's UTF-8 text, or null when it is not in the snapshot. */
  read(path: string): Promise<string | null>;
  /**
   * Streams file texts in index order with bounded memory (one pack at a time), for Grep.
   * `filter` skips paths before their bytes are fetched.
   */
  scan(filter?: (path: string) => boolean): AsyncIterable<{ path: string; text: string }>;
  /** Like {@link scan}, every file's bytes as stored (the workspace of remote execution). */
  scanBytes(): AsyncIterable<{ path: string; bytes: Uint8Array }>;
}
