import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildSnapshot } from "../../local-client/snapshot.ts";

/**
 * Benchmark: building the snapshot of a 10,000-file repository (`buildSnapshot`: git view,
 * filtering, deterministic tar.gz, sha256) against `git archive HEAD | gzip` of the same
 * tree, the fastest way git itself has to produce a tar.gz of it. Target: ≤ 1.5×.
 *
 *   npx tsx test/bench/snapshot.ts            # prints the table
 *   import { benchSnapshot } from "./snapshot.ts"; await benchSnapshot();
 */

export interface BenchRow {
  name: string;
  /** planport's measurement. */
  value: number;
  /** The reference measurement, same unit. */
  baseline: number;
  /** value / baseline. */
  ratio: number;
  /** The ratio we aim to stay under. */
  target: number;
}

const FILES = 10_000;
const RUNS = 7;
const TARGET_RATIO = 1.5;

/**
 * Builds the repository once, then alternates the two measurements `runs` times (after one
 * unmeasured warm-up each) and compares their medians.
 *
 * @example
 * const [row] = await benchSnapshot();
 * console.log(row.ratio <= row.target ? "met" : "missed");
 */
export async function benchSnapshot(
  options: { files?: number; runs?: number } = {},
): Promise<BenchRow[]> {
  const files = options.files ?? FILES;
  const runs = options.runs ?? RUNS;
  const root = mkdtempSync(join(tmpdir(), "planport-bench-snapshot-"));
  try {
    const treeBytes = makeRepository(root, files);
    await buildSnapshot(root);
    await gitArchiveGzip(root);
    const ours: number[] = [];
    const theirs: number[] = [];
    let archiveBytes = 0;
    let snapshotBytes = 0;
    for (let run = 0; run < runs; run++) {
      let started = performance.now();
      const snapshot = await buildSnapshot(root);
      ours.push(performance.now() - started);
      snapshotBytes = snapshot.bytes.byteLength;
      started = performance.now();
      archiveBytes = await gitArchiveGzip(root);
      theirs.push(performance.now() - started);
    }
    const value = median(ours);
    const baseline = median(theirs);
    const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
    return [
      {
        name: `snapshot build of ${files.toLocaleString("en-US")} files / ${mib(treeBytes)} MiB vs git archive | gzip (ms, median of ${runs}; ${mib(snapshotBytes)} vs ${mib(archiveBytes)} MiB gz)`,
        value: round(value),
        baseline: round(baseline),
        ratio: round(value / baseline),
        target: TARGET_RATIO,
      },
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

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchSnapshot();
  console.table(rows);
}
