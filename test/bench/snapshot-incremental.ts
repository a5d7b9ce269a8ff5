import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi } from "../../local-client/http/api.ts";
import type { SentSnapshot } from "../../local-client/snapshot/send.ts";
import { collectRepository, uploadRepository } from "../../local-client/snapshot/upload.ts";
import { type BenchRow, infoRow, median, ratioRow } from "./rows.ts";
import { makeRepository, type UploadTarget } from "./snapshot.ts";

/**
 * P9 (issue 16's name for it; the deep-planning row, which had it first, is P10 now):
 * incremental snapshots. In a 10,000-file repository, per run with an owner that has nothing yet and a
 * state folder with no base:
 *
 *   1. the first `planport plan`'s snapshot (collect + upload of every blob);
 *   2. one file edited, the second snapshot (collect + upload against the first as base);
 *   3. a fresh `git clone` of the committed repository into a new folder with a new state
 *      folder (no base), the same owner: its snapshot.
 *
 * Targets: (2) sends ≤ 1 % of (1)'s bytes and takes ≤ 0.25× its time; (3) sends ≤ 1 % of (1)'s
 * bytes. Bytes are request bodies (snapshot/send.ts `sentBytes`); times are wall clock of
 * collect + upload, medians of `runs`.
 *
 *   import { benchIncrementalSnapshot } from "./snapshot-incremental.ts";
 */

const FILES = 10_000;
const RUNS = 5;
/** Fresh owners used by this section start here (P4 uses 0…6). */
export const FIRST_OWNER = 10;

export async function benchIncrementalSnapshot(options: {
  upload: UploadTarget;
  files?: number;
  runs?: number;
}): Promise<BenchRow[]> {
  const files = options.files ?? FILES;
  const runs = options.runs ?? RUNS;
  const work = mkdtempSync(join(tmpdir(), "planport-bench-incremental-"));
  const root = join(work, "repo");
  try {
    mkdirSync(root);
    makeRepository(root, files);
    const first: Measured[] = [];
    const second: Measured[] = [];
    const cloned: Measured[] = [];
    const clonedEdited: Measured[] = [];
    for (let run = 0; run < runs; run++) {
      const who = {
        server: options.upload.server,
        token: options.upload.tokenForRun(FIRST_OWNER + run),
      };
      const state = join(work, `state-${run}`);
      first.push(await measure(root, who, state));
      // One edit in the working tree (uncommitted, as while working).
      appendFileSync(join(root, "packages/p3/src/module-7/file-283.ts"), `// edit ${run}\n`);
      second.push(await measure(root, who, state));
      const clone = join(work, `clone-${run}`);
      execFileSync("git", ["clone", "--quiet", "--no-hardlinks", root, clone]);
      cloned.push(await measure(clone, who, join(work, `clone-state-${run}`)));
      // The harder case: a clone whose tree the server has not seen, and no base to build on
      // (the whole manifest goes, with the one new blob).
      appendFileSync(join(clone, "packages/p5/src/module-9/file-365.ts"), `// clone edit ${run}\n`);
      clonedEdited.push(await measure(clone, who, join(work, `clone-edited-state-${run}`)));
      rmSync(clone, { recursive: true, force: true });
      execFileSync("git", ["checkout", "--quiet", "--", "."], { cwd: root });
    }
    for (const m of [...first, ...second]) {
      if (m.sent.reused) throw new Error("a snapshot that had to be sent was found on the server");
    }
    const firstBytes = median(first.map((m) => m.sent.sentBytes));
    const firstMs = median(first.map((m) => m.ms));
    const count = files.toLocaleString("en-US");
    const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
    return [
      infoRow({
        id: "P9",
        name: `first snapshot of ${count} files (every blob sent; ${kib(firstBytes)}), median of ${runs}`,
        unit: "ms",
        value: firstMs,
        baseline: firstMs,
        baselineName: "itself",
      }),
      ratioRow({
        id: "P9",
        name: `after one edited file: bytes sent by the second snapshot (${kib(median(second.map((m) => m.sent.sentBytes)))}; ${median(second.map((m) => m.sent.blobsSent))} blob)`,
        unit: "B",
        value: median(second.map((m) => m.sent.sentBytes)),
        baseline: firstBytes,
        baselineName: "bytes sent by the first snapshot",
        maxRatio: 0.01,
      }),
      ratioRow({
        id: "P9",
        name: "after one edited file: time of the second snapshot (collect + upload)",
        unit: "ms",
        value: median(second.map((m) => m.ms)),
        baseline: firstMs,
        baselineName: "time of the first snapshot",
        maxRatio: 0.25,
      }),
      ratioRow({
        id: "P9",
        name: `a fresh clone of the uploaded repository, no base (${kib(median(cloned.map((m) => m.sent.sentBytes)))}; unchanged tree: ${cloned.every((m) => m.sent.reused) ? "HEAD only" : "not found"})`,
        unit: "B",
        value: median(cloned.map((m) => m.sent.sentBytes)),
        baseline: firstBytes,
        baselineName: "bytes sent by the first snapshot",
        maxRatio: 0.01,
      }),
      infoRow({
        id: "P9",
        name: `a fresh clone with one file no snapshot has, no base: the whole manifest + 1 blob (${kib(median(clonedEdited.map((m) => m.sent.sentBytes)))}), time vs the first`,
        unit: "B",
        value: median(clonedEdited.map((m) => m.sent.sentBytes)),
        baseline: firstBytes,
        baselineName: "bytes sent by the first snapshot",
      }),
    ];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

interface Measured {
  ms: number;
  sent: SentSnapshot;
}

async function measure(
  root: string,
  who: { server: string; token: string },
  state: string,
): Promise<Measured> {
  const env = { ...process.env, XDG_DATA_HOME: state };
  const started = performance.now();
  const tree = await collectRepository(root, { env });
  const sent = await uploadRepository(createApi(who), who, tree, { env });
  return { ms: performance.now() - started, sent };
}
