import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { createApi } from "../../local-client/http/api.ts";
import { collectTree } from "../../local-client/snapshot/build.ts";
import { collectRepository, uploadRepository } from "../../local-client/snapshot/upload.ts";
import { type BenchRow, formatTable, infoRow, median, ratioRow } from "./rows.ts";

/**
 * P4: what `planport plan` does with a 10,000-file repository before the session starts, the
 * first time — collecting the tree (git view, filtering, blob ids from git's index), then the
 * incremental upload with the client's own code (`HEAD`, missing blobs, blob packs, manifest:
 * docs/PROTOCOL.md "Incremental snapshots") — against `git archive HEAD | gzip` of the same
 * tree, the fastest way git itself has to produce a tar.gz of it. Target: ≤ 1.5×. Each run
 * uploads to an owner that has nothing yet, from a state folder with no base, so every blob is
 * sent and stored (no dedup).
 *
 *   npx tsx test/bench/snapshot.ts            # build only, prints the table
 *   import { benchSnapshot } from "./snapshot.ts"; await benchSnapshot({ upload });
 */

const FILES = 10_000;
const RUNS = 7;
const TARGET_RATIO = 1.5;

/** Where builds are uploaded: a server and one token per run, each an owner with no uploads. */
export interface UploadTarget {
  server: string;
  tokenForRun: (run: number) => string;
}

/**
 * Builds the repository once, then alternates the two measurements `runs` times (after one
 * unmeasured warm-up each) and compares their medians. Without `upload`, only the build is
 * measured.
 *
 * @example
 * const [row] = await benchSnapshot({ upload: { server: worker.url, tokenForRun: (n) => worker.freshOwner(n) } });
 * console.log(row.met ? "met" : "missed");
 */
export async function benchSnapshot(
  options: { files?: number; runs?: number; upload?: UploadTarget } = {},
): Promise<BenchRow[]> {
  const files = options.files ?? FILES;
  const runs = options.runs ?? RUNS;
  const upload = options.upload;
  const root = mkdtempSync(join(tmpdir(), "planport-bench-snapshot-"));
  try {
    const treeBytes = makeRepository(root, files);
    await collectTree(root);
    await gitArchiveGzip(root);
    const builds: number[] = [];
    const totals: number[] = [];
    const uploads: number[] = [];
    const theirs: number[] = [];
    let archiveBytes = 0;
    let snapshotBytes = 0;
    for (let run = 0; run < runs; run++) {
      const state = mkdtempSync(join(tmpdir(), "planport-bench-state-"));
      const env = { ...process.env, XDG_DATA_HOME: state };
      let started = performance.now();
      const tree = await collectRepository(root, { env });
      builds.push(performance.now() - started);
      if (upload !== undefined) {
        const uploadStarted = performance.now();
        const who = { server: upload.server, token: upload.tokenForRun(run) };
        const sent = await uploadRepository(createApi(who), who, tree, { env });
        if (sent.reused || sent.blobsSent === 0) {
          throw new Error(
            "the benchmark owner already holds these blobs; the upload would be skipped",
          );
        }
        if (sent.files !== tree.files.length) {
          throw new Error(`the worker stored ${sent.files} files of ${tree.files.length}`);
        }
        uploads.push(performance.now() - uploadStarted);
        snapshotBytes = sent.sentBytes;
      }
      rmSync(state, { recursive: true, force: true });
      totals.push(performance.now() - started);
      started = performance.now();
      archiveBytes = await gitArchiveGzip(root);
      theirs.push(performance.now() - started);
    }
    const baseline = median(theirs);
    const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
    const count = files.toLocaleString("en-US");
    const sizes = `${mib(treeBytes)} MiB tree; ${mib(snapshotBytes)} MiB sent vs ${mib(archiveBytes)} MiB git archive | gzip`;
    const buildRow = (id: string) => ({
      id,
      name: `snapshot collect of ${count} files (blob ids from git's index), median of ${runs} (${sizes})`,
      unit: "ms",
      value: median(builds),
      baseline,
      baselineName: "git archive HEAD | gzip -6, same tree",
    });
    if (upload === undefined) return [ratioRow({ ...buildRow("P4"), maxRatio: TARGET_RATIO })];
    return [
      ratioRow({
        id: "P4",
        name: `first snapshot of ${count} files: collect + incremental upload of every blob, median of ${runs}`,
        unit: "ms",
        value: median(totals),
        baseline,
        baselineName: "git archive HEAD | gzip -6, same tree",
        maxRatio: TARGET_RATIO,
      }),
      infoRow(buildRow("P4")),
      infoRow({
        id: "P4",
        name: `of which the upload (${mib(snapshotBytes)} MiB of bodies; the worker gunzips, hashes, checks and stores ${mib(treeBytes)} MiB), median`,
        unit: "ms",
        value: median(uploads),
        baseline,
        baselineName: "git archive HEAD | gzip -6, same tree",
      }),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Fills `root` with a committed, packed repository of `count` source-like files (seeded, so
 * always the same tree); returns their total size in bytes.
 *
 * @example
 * const bytes = makeRepository(mkdtempSync(join(tmpdir(), "bench-")), 10_000);
 */
export function makeRepository(root: string, count: number): number {
  let random = 0x2545f491;
  const next = (): number => {
    random ^= random << 13;
    random ^= random >>> 17;
    random ^= random << 5;
    return (random >>> 0) / 0x1_0000_0000;
  };
  const words = [
    "session",
    "plan",
    "event",
    "snapshot",
    "await",
    "return",
    "const",
    "export",
    "function",
    "string",
    "number",
    "planner",
    "decision",
    "review",
  ];
  let total = 0;
  for (let i = 0; i < count; i++) {
    const path = `packages/p${i % 40}/src/module-${Math.floor(i / 40)}/file-${i}.ts`;
    const lines: string[] = [];
    const lineCount = 20 + Math.floor(next() * 180);
    for (let line = 0; line < lineCount; line++) {
      const length = 3 + Math.floor(next() * 8);
      const text = Array.from({ length }, () => words[Math.floor(next() * words.length)]).join(" ");
      lines.push(`${"  ".repeat(line % 4)}${text}; // ${Math.floor(next() * 1e6)}`);
    }
    const content = `${lines.join("\n")}\n`;
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
    total += Buffer.byteLength(content);
  }
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, stdio: "ignore" });
  git("init", "--quiet", "--initial-branch=main");
  git("add", "--all");
  git(
    "-c",
    "user.email=bench@planport.invalid",
    "-c",
    "user.name=bench",
    "-c",
    "commit.gpgsign=false",
    "commit",
    "--quiet",
    "-m",
    "bench tree",
  );
  git("repack", "-a", "-d", "-q");
  return total;
}

/** `git archive HEAD | gzip -6`, output counted and discarded; resolves with its size. */
function gitArchiveGzip(root: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", "git archive --format=tar HEAD | gzip -6"], { cwd: root });
    let bytes = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(bytes) : reject(new Error(`git archive | gzip exited ${code}`)),
    );
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatTable(await benchSnapshot()));
}
