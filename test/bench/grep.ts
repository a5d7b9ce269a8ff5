import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createApi } from "../../local-client/http/api.ts";
import { buildSnapshot } from "../../local-client/snapshot/build.ts";
import type { Event } from "../../src/protocol/index.ts";
import { type BenchRow, median, ratioRow } from "./rows.ts";
import type { BenchWorker } from "./worker.ts";

/**
 * P5: the worker's Grep tool over a 50 MB snapshot against GNU grep over the same files.
 *
 * The tree is written to disk, packed by the client's own `buildSnapshot` and uploaded. Each
 * trial is a fresh scripted session whose only turn is one `Grep` call for a literal that
 * occurs on a few lines (so the tool reads every file and never stops early at its output
 * cap). The tool's time runs from its assistant event (stamped by the worker when the turn is
 * stored, just before the tool starts) to the moment its tool_result event is seen by a tight
 * poll: an upper bound that includes up to one poll interval and one round trip. (The result
 * event's own timestamp is not used: workerd advances `Date.now()` only at I/O, so it would
 * leave out the scan of the last pack.) The baseline is `grep -rn` over the same folder,
 * warm cache, median.
 *
 * @example
 * const rows = await benchGrep(worker, { trials: 5 });
 */

/** About 50 MB of source-like text. */
const TREE_BYTES = 50 * 1000 * 1000;
const NEEDLE = "planportNeedleToken";
const NEEDLE_LINES = 120;
const TRIALS = 5;
const GREP_RUNS = 9;
const MAX_FILE_BYTES = 400 * 1024;
const MIN_FILE_BYTES = 2 * 1024;
/** How often the result is looked for while the tool runs. */
const RESULT_PROBE_MS = 10;
const RESULT_DEADLINE_MS = 120_000;
const P5_MAX_RATIO = 5;

/**
 * Writes and uploads the tree, times `trials` worker Greps and GNU grep over it.
 *
 * @example const rows = await benchGrep(worker, { trials: 2, treeBytes: 10_000_000 });
 */
export async function benchGrep(
  worker: BenchWorker,
  options: { trials?: number; treeBytes?: number } = {},
): Promise<BenchRow[]> {
  const trials = options.trials ?? TRIALS;
  const root = mkdtempSync(join(tmpdir(), "planport-bench-grep-"));
  try {
    const tree = writeTree(root, options.treeBytes ?? TREE_BYTES);
    const snapshot = await buildSnapshot(root);
    const receipt = await createApi({ server: worker.url, token: worker.token }).uploadSnapshot(
      snapshot.bytes,
    );
    if (receipt.files !== tree.files) {
      throw new Error(`the worker stored ${receipt.files} of ${tree.files} files`);
    }

    const ours: number[] = [];
    for (let trial = 0; trial < trials; trial++) {
      ours.push(await timeWorkerGrep(worker, receipt.id));
    }
    // Warm the page cache, then time.
    await gnuGrep(root);
    const theirs: number[] = [];
    for (let run = 0; run < GREP_RUNS; run++) {
      const started = performance.now();
      const lines = await gnuGrep(root);
      theirs.push(performance.now() - started);
      if (lines !== NEEDLE_LINES) throw new Error(`grep found ${lines} lines, not ${NEEDLE_LINES}`);
    }
    const mb = (tree.bytes / 1e6).toFixed(1);
    return [
      ratioRow({
        id: "P5",
        name: `worker Grep (content mode) over a ${mb} MB / ${tree.files.toLocaleString("en-US")}-file snapshot, median of ${trials} sessions`,
        unit: "ms",
        value: median(ours),
        baseline: median(theirs),
        baselineName: `grep -rn over the same files (warm cache, median of ${GREP_RUNS})`,
        maxRatio: P5_MAX_RATIO,
      }),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** One session, one Grep: milliseconds from the assistant event to its result being visible. */
async function timeWorkerGrep(worker: BenchWorker, snapshotId: string): Promise<number> {
  const session = await worker.createScripted(
    [
      {
        content: [
          {
            type: "tool_use",
            id: "toolu_bench_grep",
            name: "Grep",
            input: { pattern: NEEDLE, output_mode: "content", head_limit: 1_000 },
          },
        ],
      },
    ],
    { snapshot_id: snapshotId },
  );
  const deadline = Date.now() + RESULT_DEADLINE_MS;
  let after: string | null = null;
  let startedAt: number | null = null;
  for (;;) {
    const page = await worker.events(session.id, after);
    const seenAt = Date.now();
    after = page.last_id ?? after;
    for (const event of page.data) {
      if (isGrepCall(event)) startedAt = Date.parse(event.created_at);
      const result = grepResult(event);
      if (result === null) continue;
      if (startedAt === null) throw new Error("the Grep result came before its call");
      const rows = result.split("\n").filter((line) => line.includes(NEEDLE)).length;
      if (rows !== NEEDLE_LINES) {
        throw new Error(
          `the worker's Grep found ${rows} lines, not ${NEEDLE_LINES}: ${result.slice(0, 300)}`,
        );
      }
      return seenAt - startedAt;
    }
    if (Date.now() > deadline) throw new Error("the worker's Grep did not finish in time");
    await new Promise((r) => setTimeout(r, RESULT_PROBE_MS));
  }
}

function isGrepCall(event: Event): boolean {
  return (
    event.type === "assistant" &&
    event.message.content.some((b) => b.type === "tool_use" && b.id === "toolu_bench_grep")
  );
}

function grepResult(event: Event): string | null {
  if (event.type !== "user" || typeof event.message.content === "string") return null;
  for (const block of event.message.content) {
    if (block.type !== "tool_result" || block.tool_use_id !== "toolu_bench_grep") continue;
    if (block.is_error)
      throw new Error(`the worker's Grep failed: ${JSON.stringify(block.content)}`);
    return typeof block.content === "string"
      ? block.content
      : block.content.map((b) => b.text).join("\n");
  }
  return null;
}

/** `grep -rn NEEDLE root`, output counted and discarded; resolves with the matching lines. */
function gnuGrep(root: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("grep", ["-rn", NEEDLE, root], { stdio: ["ignore", "pipe", "inherit"] });
    let lines = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 10) lines += 1;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(lines) : reject(new Error(`grep exited ${code}`)),
    );
  });
}

/**
 * Writes source-like files (seeded, so the same tree every run) of 2–400 KiB until `bytes`
 * are written, with {@link NEEDLE} on {@link NEEDLE_LINES} lines spread over the tree.
 */
function writeTree(root: string, bytes: number): { files: number; bytes: number } {
  let random = 0x1234abcd;
  const next = (): number => {
    random ^= random << 13;
    random ^= random >>> 17;
    random ^= random << 5;
    return (random >>> 0) / 0x1_0000_0000;
  };
  const words = ["const", "return", "await", "session", "event", "plan", "export", "function"];
  const sizes: number[] = [];
  for (let total = 0; total < bytes; ) {
    // Mostly small files, a few large ones, as in a real repository.
    const size = Math.round(MIN_FILE_BYTES * (MAX_FILE_BYTES / MIN_FILE_BYTES) ** (next() ** 2));
    sizes.push(size);
    total += size;
  }
  const needleFiles = new Set<number>();
  while (needleFiles.size < NEEDLE_LINES) needleFiles.add(Math.floor(next() * sizes.length));
  let written = 0;
  sizes.forEach((size, i) => {
    const lines: string[] = [];
    let length = 0;
    if (needleFiles.has(i)) {
      const line = `// ${NEEDLE}: keep in step with the session schema (${i})`;
      lines.push(line);
      length += line.length + 1;
    }
    while (length < size) {
      const count = 3 + Math.floor(next() * 9);
      const text = Array.from({ length: count }, () => words[Math.floor(next() * words.length)]);
      const line = `${"  ".repeat(lines.length % 3)}${text.join(" ")}(${Math.floor(next() * 1e6)});`;
      lines.push(line);
      length += line.length + 1;
    }
    const path = join(root, `src/area-${i % 25}/mod-${Math.floor(i / 25)}/file-${i}.ts`);
    mkdirSync(dirname(path), { recursive: true });
    const content = `${lines.join("\n")}\n`;
    writeFileSync(path, content);
    written += Buffer.byteLength(content);
  });
  return { files: sizes.length, bytes: written };
}
