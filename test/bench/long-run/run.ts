import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findMirror } from "../planner/mirrors.ts";
import { formatReport, type Pair, type PathResult, type Windows } from "./report.ts";
import { describeState, measureStateFolder } from "./state-folder.ts";
import {
  type BenchWorker,
  planAndArchive,
  startLongRunWorker,
  type UploadPath,
  uploadTree,
} from "./worker.ts";

/**
 * The embedded worker after a hundred plans (issue 22): N plans in a row on one long-lived
 * `wrangler dev`, each on the next commit of one real repository (consecutive first-parent
 * commits of a mirror), each session archived after its plan, as a user's worker sees them.
 * Once per way of uploading:
 *
 *   - `incremental`: the CLI's path (collect, missing blobs, manifest; its state folder), and
 *   - `tarball`: `POST /v1/snapshots` with the whole tree as tar.gz (scripts, older clients).
 *
 * Reported per path: the plan time and the CPU the worker's workerd spent per plan, medians of
 * the plans around the 10th against the last ones (the ratio should stay near 1); the state
 * folder after every 10 plans, by part (R2, Durable Objects, other); and, because a shared
 * machine's load drifts over a long run, the last plans once more on the grown worker and on a
 * fresh one given only the last tree, back to back (the issue's own comparison, free of drift),
 * with whether both named the same files.
 *
 *   npm run bench:long-run -- --mirrors /work/.mirror            # 100 plans per path
 *   npm run bench:long-run -- --mirrors /work/.mirror --quick    # 20 plans per path
 *   npm run bench:long-run -- --mirrors DIR --paths tarball --plans 40 --out results.md
 *
 * `--mirrors DIR` holds `sympy+sympy` (a bare mirror or a clone; `--repo owner/name` picks
 * another); `PLANPORT_BENCH_MIRRORS=DIR` stands for it. The repository is only read from the
 * mirror (a shared clone in a temporary folder is checked out commit by commit), never copied
 * here. `--retention-days D` sets PLANPORT_RETENTION_DAYS (the default keeps archived sessions
 * for 7 days, as a user's worker does); `--keep` keeps the temporary folders.
 */

/**
 * One task per plan, in rotation: any 10 plans in a row hold each task once, so two windows of
 * 10 compare the same work on a grown worker.
 */
const TASKS = [
  "Fix simplify() returning an unsimplified result for expressions with sinh and cosh",
  "Add support for more Mathematica operators in the Mathematica parser",
  "Make the series expansion of cos and sin in ring_series handle a constant term",
  "Improve the docstring of Basic.count with examples",
  "Mark tests that change global state as thread-unsafe",
  "Matrix determinant is slow for sparse matrices with symbolic entries",
  "solveset should return a ConditionSet for transcendental equations it cannot solve",
  "Add a character table example to the combinatorics group documentation",
  "Printing of Piecewise in LaTeX loses parentheses around negative arguments",
  "Integrate rational functions with symbolic coefficients faster in risch",
];
const EVERY = 10;

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
    repo: { type: "string", default: "sympy/sympy" },
    plans: { type: "string" },
    paths: { type: "string", default: "incremental,tarball" },
    quick: { type: "boolean", default: false },
    out: { type: "string" },
    keep: { type: "boolean", default: false },
    "retention-days": { type: "string" },
  },
});

const plans = Number(values.plans ?? (values.quick ? 20 : 100));
const width = values.quick ? 5 : 10;
const windows: Windows = {
  early: { from: 10 - Math.floor(width / 2) + 1, to: 10 - Math.floor(width / 2) + width },
  late: { from: plans - width + 1, to: plans },
  every: EVERY,
};
const paths = (values.paths ?? "").split(",").map((p) => p.trim());
for (const p of paths) {
  if (p !== "incremental" && p !== "tarball") {
    console.error(`Unknown path ${p}; choose from incremental, tarball.`);
    process.exit(2);
  }
}
if (!(plans >= 10 + width)) {
  console.error(`--plans must be at least ${10 + width}.`);
  process.exit(2);
}
const mirrors = values.mirrors;
if (mirrors === undefined) {
  console.error(
    "Pass --mirrors DIR (the folder holding sympy+sympy), or set PLANPORT_BENCH_MIRRORS.",
  );
  process.exit(2);
}
const repo = values.repo ?? "sympy/sympy";
const gitDir = findMirror(mirrors, repo);
if (gitDir === null) {
  console.error(`No mirror of ${repo} under ${mirrors}.`);
  process.exit(2);
}
const vars: Record<string, string> =
  values["retention-days"] === undefined
    ? {}
    : { PLANPORT_RETENTION_DAYS: values["retention-days"] };

function git(args: string[]): string {
  return execFileSync("git", args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

/** The last `count` first-parent commits of the mirror's HEAD, oldest first. */
function consecutiveCommits(count: number): string[] {
  return git(["-C", gitDir as string, "rev-list", "--first-parent", `--max-count=${count}`, "HEAD"])
    .trim()
    .split("\n")
    .reverse();
}

function filesAt(checkout: string): Set<string> {
  return new Set(git(["-C", checkout, "ls-files"]).split("\n").filter(Boolean));
}

async function runPath(path: UploadPath, commits: readonly string[]): Promise<PathResult> {
  const work = mkdtempSync(join(tmpdir(), `planport-long-run-${path}-`));
  const persist = join(work, "persist");
  const checkout = join(work, "checkout");
  git(["clone", "--quiet", "--shared", "--no-checkout", gitDir as string, checkout]);
  const result: PathResult = { path, plans: [], states: [], pairs: [], failures: [] };
  const grown = await startLongRunWorker(persist, vars);
  let lastSnapshot: string | null = null;
  try {
    for (let i = 0; i < commits.length; i++) {
      const n = i + 1;
      const commit = commits[i] as string;
      git(["-C", checkout, "checkout", "--quiet", "--force", "--detach", commit]);
      const started = performance.now();
      let snapshotId: string;
      try {
        snapshotId = await uploadTree(grown, path, checkout, join(work, "client-state"));
      } catch (error) {
        result.failures.push(`plan ${n}: upload: ${String(error)}`);
        continue;
      }
      lastSnapshot = snapshotId;
      const uploadMs = performance.now() - started;
      const task = TASKS[i % TASKS.length] as string;
      const planned = await planAndArchive(grown, snapshotId, task, filesAt(checkout));
      if (planned.failure !== null) result.failures.push(`plan ${n}: ${planned.failure}`);
      result.plans.push({ ...planned, n, commit: commit.slice(0, 10), uploadMs });
      console.error(
        `${path} ${n}/${commits.length} ${commit.slice(0, 10)}: upload ${uploadMs.toFixed(0)} ms, plan ${planned.planMs.toFixed(0)} ms, workerd CPU ${planned.cpuMs.toFixed(0)} ms${planned.failure === null ? "" : ` (failed: ${planned.failure})`}`,
      );
      if (n % EVERY === 0 || n === commits.length) {
        const state = measureStateFolder(persist, n);
        result.states.push(state);
        console.error(`  state after ${n}: ${describeState(state)}`);
      }
    }
    if (lastSnapshot !== null) {
      result.pairs = await againOnFreshWorker(path, grown, lastSnapshot, checkout, work);
    }
  } finally {
    await grown.stop();
    if (values.keep) console.error(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  return result;
}

/**
 * The last window's tasks on the last tree once more, each on the grown worker and on a fresh
 * one that was given only that tree, back to back (alternating which goes first), so both see
 * the same machine load.
 */
async function againOnFreshWorker(
  path: UploadPath,
  grown: BenchWorker,
  grownSnapshot: string,
  checkout: string,
  work: string,
): Promise<Pair[]> {
  const fresh = await startLongRunWorker(join(work, "fresh-persist"), vars);
  try {
    const snapshot = await uploadTree(fresh, path, checkout, join(work, "fresh-client-state"));
    const files = filesAt(checkout);
    // The fresh worker's first plan loads the modules and wakes the objects: not measured.
    await planAndArchive(fresh, snapshot, TASKS[0] as string, files);
    const pairs: Pair[] = [];
    for (let k = 0; k < width; k++) {
      const task = TASKS[(plans - width + k) % TASKS.length] as string;
      const runGrown = () => planAndArchive(grown, grownSnapshot, task, files);
      const runFresh = () => planAndArchive(fresh, snapshot, task, files);
      const [first, second] = k % 2 === 0 ? [runGrown, runFresh] : [runFresh, runGrown];
      const a = await first();
      const b = await second();
      const pair = k % 2 === 0 ? { task, grown: a, fresh: b } : { task, grown: b, fresh: a };
      pairs.push(pair);
      console.error(
        `${path} again ${k + 1}/${width}: grown ${pair.grown.planMs.toFixed(0)} ms / ${pair.grown.cpuMs.toFixed(0)} ms CPU, fresh ${pair.fresh.planMs.toFixed(0)} ms / ${pair.fresh.cpuMs.toFixed(0)} ms CPU, same files: ${pair.grown.named.join(",") === pair.fresh.named.join(",")}`,
      );
    }
    return pairs;
  } finally {
    await fresh.stop();
  }
}

const commits = consecutiveCommits(plans);
const began = performance.now();
const startLoad = loadavg()
  .map((n) => n.toFixed(2))
  .join(", ");
const results: PathResult[] = [];
for (const path of paths as UploadPath[]) results.push(await runPath(path, commits));
const context = [
  `- **Run:** ${new Date().toISOString()}, ${((performance.now() - began) / 60_000).toFixed(1)} min; ${plans} plans per path on ${repo} (${commits[0]?.slice(0, 10)}…${commits.at(-1)?.slice(0, 10)}, consecutive first-parent commits), each session archived after its plan${values["retention-days"] === undefined ? "" : `; PLANPORT_RETENTION_DAYS=${values["retention-days"]}`}`,
  `- **Command:** \`npm run bench:long-run -- ${process.argv.slice(2).join(" ")}\``,
  `- **Machine:** \`nproc\` ${execFileSync("nproc", { encoding: "utf8" }).trim()} (${cpus()[0]?.model ?? "unknown CPU"}), Node ${process.version}; load average at start ${startLoad}, at end ${loadavg()
    .map((n) => n.toFixed(2))
    .join(", ")}`,
].join("\n");
const table = `${context}\n\n${formatReport(results, windows)}`;
console.log(table);
if (values.out !== undefined) appendFileSync(values.out, `${table}\n`);
