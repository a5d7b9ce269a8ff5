import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { startWorkerProcess } from "../../../local-client/embedded/worker-process.ts";
import { createApi } from "../../../local-client/http/api.ts";
import { collectRepository, uploadRepository } from "../../../local-client/snapshot/upload.ts";
import { findMirror } from "./mirrors.ts";
import { planOnce } from "./plan-session.ts";

/**
 * Consecutive commits on one worker (issue 31: "100 consecutive commits of one large repository
 * planned by the CLI: the last ten took 1.53× the first ten"). One embedded worker (the built
 * bundle) and one owner; the repository's last `--commits` first-parent commits are checked out
 * one after another into the same folder, each uploaded as the CLI uploads it (collect + an
 * incremental upload against the previous snapshot as base) and planned with the same task, so
 * the only thing that changes between the first and the last plan is what the worker has
 * stored before it. Reports, for the first ten and the last ten commits, the medians of the
 * worker's plan time (session created → plan waiting, the session's clock), the upload, and
 * end to end (collect + upload + plan, probed every 100 ms — not the CLI's 3 s poll, which
 * would round every figure up to a multiple of 3 s), and the ratios last/first.
 *
 *   npx tsx test/bench/planner/consecutive.ts --repo /work/.mirror/tokio-rs+tokio --commits 100
 *   npx tsx test/bench/planner/consecutive.ts --repo DIR --commits 30 --task "…" --out FILE
 */

const TOKEN = "bench-consecutive";
const DEFAULT_TASK =
  "Fix the timeout handling when a connection is closed while a read is pending, and add a test";
const PLAN_TIMEOUT_MS = 600_000;
const WINDOW = 10;

const { values } = parseArgs({
  options: {
    /** A mirror folder (`DIR/owner+name`, as mirrors.ts finds it) or a git directory. */
    repo: { type: "string", default: "/work/.mirror/tokio-rs+tokio" },
    commits: { type: "string", default: "100" },
    task: { type: "string", default: DEFAULT_TASK },
    out: { type: "string" },
  },
});
const count = Number(values.commits);
const gitDir =
  findMirror(dirname(values.repo!), basename(values.repo!).replace("+", "/")) ?? values.repo!;
const task = values.task!;
const commits = execFileSync(
  "git",
  ["-C", gitDir, "rev-list", "--first-parent", "--reverse", `--max-count=${count}`, "HEAD"],
  { encoding: "utf8" },
)
  .trim()
  .split("\n")
  .slice(-count);
execFileSync("npx", ["tsx", "scripts/build.ts", "--if-stale"]);

interface Row {
  commit: string;
  files: number;
  uploadMs: number;
  planMs: number;
  endToEndMs: number;
}

const began = Date.now();
const startLoad = loadavg().map((n) => n.toFixed(2));
const work = mkdtempSync(join(tmpdir(), "planport-consecutive-"));
const root = join(work, "repo");
const state = join(work, "state");
const persistDir = join(work, "worker");
mkdirSync(persistDir);
// A shared clone of the mirror (the mirror itself is only read): the CLI snapshots a checkout.
execFileSync("git", ["clone", "--quiet", "--shared", "--no-checkout", gitDir, root]);
const env = { ...process.env, XDG_DATA_HOME: state };
const worker = await startWorkerProcess({
  persistDir,
  runtime: "built",
  vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline", PLANPORT_RATE_LIMITS: "off" },
});
const who = { server: worker.url, token: TOKEN };
const api = createApi(who);
const rows: Row[] = [];
try {
  for (const [i, commit] of commits.entries()) {
    checkout(commit);
    const started = performance.now();
    const tree = await collectRepository(root, { env });
    const sent = await uploadRepository(api, who, tree, { env });
    const uploadMs = performance.now() - started;
    const outcome = await planOnce(api, sent.id, task, PLAN_TIMEOUT_MS);
    if (outcome.kind === "failure") throw new Error(`${commit}: ${outcome.reason}`);
    const row = {
      commit,
      files: tree.files.length,
      uploadMs,
      planMs: outcome.serverMs,
      endToEndMs: performance.now() - started,
    };
    rows.push(row);
    console.error(
      `${i + 1}/${commits.length} ${commit.slice(0, 10)} ${row.files} files: upload ${Math.round(uploadMs)} ms, plan ${Math.round(row.planMs)} ms, end to end ${Math.round(row.endToEndMs)} ms`,
    );
  }
} finally {
  await worker.stop();
  rmSync(work, { recursive: true, force: true });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const first = rows.slice(0, WINDOW);
const last = rows.slice(-WINDOW);
const line = (name: string, pick: (r: Row) => number) => {
  const a = median(first.map(pick));
  const b = median(last.map(pick));
  return `| ${name} | ${Math.round(a)} ms | ${Math.round(b)} ms | ${(b / a).toFixed(2)}× |`;
};
const report = [
  `- **Run:** ${new Date(began).toISOString()}, ${((Date.now() - began) / 60_000).toFixed(1)} min; ${rows.length} consecutive first-parent commits of \`${gitDir}\` ending at ${commits.at(-1)!.slice(0, 12)}, ${rows[0]?.files ?? 0}–${rows.at(-1)?.files ?? 0} files, one embedded worker (built bundle), one owner`,
  `- **Command:** \`npx tsx test/bench/planner/consecutive.ts ${process.argv
    .slice(2)
    .map((a) => (a.includes(" ") ? JSON.stringify(a) : a))
    .join(" ")}\``,
  `- **Machine:** \`nproc\` ${cpus().length}; load average at start ${startLoad.join(", ")}, at end ${loadavg()
    .map((n) => n.toFixed(2))
    .join(", ")}`,
  "",
  `| median of | first ${WINDOW} | last ${WINDOW} | last / first |`,
  "|---|---|---|---|",
  line("plan (worker: session created → plan waiting)", (r) => r.planMs),
  line("upload (collect + incremental upload)", (r) => r.uploadMs),
  line("end to end (upload + plan, 100 ms probe)", (r) => r.endToEndMs),
].join("\n");
console.log(report);
if (values.out !== undefined) writeFileSync(values.out, `${report}\n`);

/** The checkout holds `commit`'s tree and nothing else (same folder every time: the CLI's base). */
function checkout(commit: string): void {
  execFileSync("git", ["-C", root, "checkout", "--quiet", "--force", "--detach", commit]);
  execFileSync("git", ["-C", root, "clean", "--quiet", "-fdx"]);
}
