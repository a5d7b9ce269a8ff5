import type { SessionPort, SnapshotEntry } from "../port.ts";

/**
 * The files the tools see: the repository snapshot with the copy-on-write overlay on top (what
 * remote execution wrote or deleted), plus the plan file. Reads go overlay first; listings and
 * scans merge both, sorted by path, so every tool answers deterministically.
 */
export class Workspace {
  #snapshotList: Promise<readonly SnapshotEntry[]> | null = null;

  constructor(
    private readonly port: SessionPort,
    readonly planPath: string,
  ) {}

  /** The plan file's content, or null before it was first written. */
  readPlan(): string | null {
    return this.port.readPlan()?.content ?? null;
  }

  /** A repository file's text (overlay first), or null when it does not exist. */
  async readRepoFile(path: string): Promise<string | null> {
    const overlay = this.port.readOverlay(path);
    if (overlay === null) return null;
    if (overlay !== undefined) return overlay;
    return this.port.snapshot.read(path);
  }

  /** Every repository file path (snapshot ∪ overlay writes − overlay deletions), sorted. */
  async listRepoFiles(): Promise<string[]> {
    const entries = await this.#snapshot();
    const paths = new Set(entries.map((e) => e.path));
    for (const path of this.port.listOverlay()) {
      if (this.port.readOverlay(path) === null) paths.delete(path);
      else paths.add(path);
    }
    return [...paths].sort(comparePaths);
  }

  /** Whether `dir` ("" for the root) holds any file. */
  async isDirectory(dir: string): Promise<boolean> {
    if (dir === "") return true;
    const prefix = `${dir}/`;
    return (await this.listRepoFiles()).some((p) => p.startsWith(prefix));
  }

  /**
   * Streams repository file texts in path order, one at a time (bounded memory): snapshot files
   * through `snapshot.scan`, overlay files from the overlay, merged. `filter` skips paths before
   * their bytes are fetched.
   */
  async *scanRepo(
    filter: (path: string) => boolean,
  ): AsyncIterable<{ path: string; text: string }> {
    const overlayPaths = this.port.listOverlay();
    const touched = new Set(overlayPaths);
    const pending = overlayPaths
      .filter((p) => filter(p) && this.port.readOverlay(p) != null)
      .sort(comparePaths);
    let next = 0;
    const drainBefore = function* (
      this: Workspace,
      limit: string | null,
    ): Generator<{ path: string; text: string }> {
      while (next < pending.length) {
        const path = pending[next]!;
        if (limit !== null && comparePaths(path, limit) > 0) return;
        next++;
        const text = this.port.readOverlay(path);
        if (typeof text === "string") yield { path, text };
      }
    };
    for await (const file of this.port.snapshot.scan((p) => !touched.has(p) && filter(p))) {
      yield* drainBefore.call(this, file.path);
      yield file;
    }
    yield* drainBefore.call(this, null);
  }

  #snapshot(): Promise<readonly SnapshotEntry[]> {
    this.#snapshotList ??= this.port.snapshot.list();
    return this.#snapshotList;
  }
}

/**
 * Code-unit order, the same as the snapshot index (never locale-dependent).
 *
 * @example
 * ["b", "a"].sort(comparePaths) // ["a", "b"]
 */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
