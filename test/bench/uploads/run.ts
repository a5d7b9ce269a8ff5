import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs, promisify } from "node:util";
import { startWorkerProcess } from "../../../local-client/embedded/worker-process.ts";
import { type Api, createApi } from "../../../local-client/http/api.ts";
import { findMirror, GIT_MAX_BUFFER_BYTES } from "../planner/mirrors.ts";
import { planOnce } from "../planner/plan-session.ts";
import { type ClientName, reportMarkdown, summarize, type TreeResult } from "./report.ts";

/**
 * Large trees planned one after another in one worker, as a script plans real issues over
 * their trees (issue 30): for each tree, the client prepares the upload (the commit's
 * `git archive | gzip`, a ~6 MB tar.gz of ~1,450 files for sphinx), works on it — some of it
 * asynchronously, then synchronously (as a script ranks the tree's files, or gzips with a sync
 * call) —, sends it with `POST /v1/snapshots`, then creates a session with the offline planner,
 * waits for the plan, reads it and archives the session.
 *
 * What the reported uploads had in common: the upload was the first request after the client's
 * work, and that work ended more than 5 s after the last answer while the event loop was
 * busy. workerd closes a keep-alive connection 5 s after its last answer without saying so;
 * Node's fetch keeps it for 4 s by a timer that cannot fire while the loop is busy, and sent the
 * upload on the closed connection: `fetch failed (cause: EPIPE)`. So the client's work is the
 * variable here: asynchronous for `--async-s` (a range: tree i waits its share of it, so the
 * uploads are spread across the idle close), then synchronous for `--busy-ms`.
 *
 * Each client gets its own worker (`wrangler dev`, offline planner, no rate limits) and the same
 * trees: `fetch` (Node's fetch as a script calls it — the planport client did the same before
 * this issue) and `planport` (local-client/http, which lets the event loop go round before each
 * request and sends an upload once more if its connection closed before any answer).
 *
 *   npm run bench:uploads -- --mirrors /work/.mirror                 # 100 sphinx trees per client
 *   npm run bench:uploads -- --mirrors DIR --trees 20 --clients planport
 *   npm run bench:uploads -- --mirrors DIR --async-s 0 --busy-ms 0   # no work between requests
 *
 * `--mirrors DIR` holds `sphinx-doc+sphinx` (a bare mirror or clone; `--repos a/b,c/d` picks
 * others, trees taken in turn); `PLANPORT_BENCH_MIRRORS=DIR` stands for it. Trees are commits
 * spread evenly over the mirror's first-parent history from `--since` to `--until` (default
 * 2019–2021: sphinx had ~1,300–1,600 files then); they are only read from the mirror. `--out FILE` writes the table, `--json FILE`
 * every tree's result.
 */

const TOKEN = "uploads-bench";
const PLAN_TIMEOUT_MS = 300_000;
/** Task texts in rotation (the offline planner plans each; what it plans is not scored here). */
const TASKS = [
  "autodoc does not document a class attribute that only has a type annotation",
  "linkcheck reports a broken anchor for a page that redirects",
  "The napoleon extension renders a Returns section without its type",
  "Cross-references to a method of a nested class are not resolved",
  "The LaTeX builder fails on a table with a merged cell in its header",
];

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
    repos: { type: "string", default: "sphinx-doc/sphinx" },
    since: { type: "string", default: "2019-01-01" },
    until: { type: "string", default: "2021-12-31" },
    trees: { type: "string", default: "100" },
    clients: { type: "string", default: "fetch,planport" },
    "async-s": { type: "string", default: "2.6-3.5" },
    "busy-ms": { type: "string", default: "2000" },
    out: { type: "string" },
    json: { type: "string" },
  },
});

if (values.mirrors === undefined) {
  console.error("usage: run.ts --mirrors DIR [--repos a/b] [--trees N] [--clients fetch,planport]");
  process.exit(2);
}
const mirrors = values.mirrors;
const treeCount = Number(values.trees);
const clients = (values.clients ?? "").split(",") as ClientName[];
const [asyncFrom, asyncTo] = (values["async-s"] ?? "0").split("-").map(Number) as [number, number?];
const asyncSpanMs = [asyncFrom * 1000, (asyncTo ?? asyncFrom) * 1000] as const;
const busyMs = Number(values["busy-ms"]);
/** Trees i and i + SPREAD wait the same; the ten in between are spread across the range. */
const SPREAD = 10;
const run = promisify(execFile);

interface Tree {
  repo: string;
  gitDir: string;
  commit: string;
}

/** `count` commits spread evenly over each repository's first-parent history, taken in turn. */
function pickTrees(count: number): Tree[] {
  const repos = (values.repos ?? "").split(",").map((repo) => {
    const gitDir = findMirror(mirrors, repo);
    if (gitDir === null) throw new Error(`no mirror of ${repo} under ${mirrors}`);
    const commits = execFileSync(
      "git",
      [
        "-C",
        gitDir,
        "rev-list",
        "--first-parent",
        `--since=${values.since}`,
        `--until=${values.until}`,
        "HEAD",
      ],
      { encoding: "utf8", maxBuffer: GIT_MAX_BUFFER_BYTES },
    )
      .trim()
      .split("\n")
      .reverse();
    return { repo, gitDir, commits };
  });
  return Array.from({ length: count }, (_, i) => {
    const { repo, gitDir, commits } = repos[i % repos.length]!;
    const perRepo = Math.ceil(count / repos.length);
    const step = Math.max(1, Math.floor(commits.length / perRepo));
    return { repo, gitDir, commit: commits[Math.floor(i / repos.length) * step]! };
  });
}

/** The commit's tree as a tar.gz, the way a script reads it from a mirror. */
async function tarGz(tree: Tree): Promise<Uint8Array> {
  const { stdout } = await run(
    "git",
    ["-C", tree.gitDir, "archive", "--format=tar.gz", tree.commit],
    { encoding: "buffer", maxBuffer: GIT_MAX_BUFFER_BYTES },
  );
  return new Uint8Array(stdout);
}

/** Synchronous work: nothing else in this process runs meanwhile, no timer, no socket event. */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the script's synchronous part (ranking files, a sync gzip): nothing to do here
  }
}

/** How a failed upload reads: the server's error code, or fetch's failure and its cause's code. */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === "string" && code !== "network_error") return code;
  // ApiError → TypeError "fetch failed" → the socket's error (EPIPE, UND_ERR_SOCKET …).
  let cause: unknown = error;
  let why = error.message;
  while (cause instanceof Error) {
    const causeCode = (cause as Error & { code?: unknown }).code;
    if (typeof causeCode === "string" && causeCode !== "network_error") why = causeCode;
    cause = (cause as Error & { cause?: unknown }).cause;
  }
  return `fetch failed (${why})`;
}

/** Sends the upload as `client` does; "ok" or how it failed. */
async function upload(client: ClientName, api: Api, server: string, body: Uint8Array) {
  try {
    if (client === "planport") {
      await api.uploadSnapshot(body);
      return "ok";
    }
    const res = await fetch(`${server}/v1/snapshots`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/gzip" },
      body: new Uint8Array(body),
    });
    const answer = (await res.json()) as { error?: { code: string } };
    return res.status === 201 ? "ok" : `${res.status} ${answer.error?.code ?? ""}`;
  } catch (error) {
    return describeFailure(error);
  }
}

async function benchClient(client: ClientName, trees: readonly Tree[]): Promise<TreeResult[]> {
  const persistDir = mkdtempSync(join(tmpdir(), `planport-bench-uploads-${client}-`));
  const worker = await startWorkerProcess({
    persistDir,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline", PLANPORT_RATE_LIMITS: "off" },
  });
  const api = createApi({ server: worker.url, token: TOKEN });
  const results: TreeResult[] = [];
  try {
    let lastAnswer = performance.now();
    for (const [i, tree] of trees.entries()) {
      const body = await tarGz(tree);
      const share = (i % SPREAD) / (SPREAD - 1);
      const asyncMs = asyncSpanMs[0] + share * (asyncSpanMs[1] - asyncSpanMs[0]);
      await delay(Math.max(0, lastAnswer + asyncMs - performance.now()));
      busyFor(busyMs);
      const sentAfterMs = performance.now() - lastAnswer;
      const started = performance.now();
      const uploaded = await upload(client, api, worker.url, body);
      const uploadMs = performance.now() - started;
      let plan: string | null = null;
      let planMs: number | null = null;
      if (uploaded === "ok") {
        const id = await sha256Hex(body);
        const outcome = await planOnce(api, id, TASKS[i % TASKS.length]!, PLAN_TIMEOUT_MS);
        plan = outcome.kind === "failure" ? outcome.reason : outcome.kind;
        planMs = outcome.clientMs;
      }
      lastAnswer = performance.now();
      const result: TreeResult = {
        client,
        repo: tree.repo,
        commit: tree.commit,
        bodyBytes: body.byteLength,
        sentAfterMs,
        upload: uploaded,
        uploadMs,
        plan,
        planMs,
      };
      results.push(result);
      console.error(
        `${client} ${String(i + 1).padStart(3)}/${trees.length} ${tree.repo}@${tree.commit.slice(0, 8)} ${(body.byteLength / 1e6).toFixed(1)} MB, sent ${(sentAfterMs / 1000).toFixed(2)} s after the last answer: upload ${uploaded} (${Math.round(uploadMs)} ms)${plan === null ? "" : `, ${plan} (${Math.round(planMs ?? 0)} ms)`}`,
      );
    }
  } finally {
    await worker.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
  return results;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new Uint8Array(bytes));
  return Buffer.from(digest).toString("hex");
}

const started = new Date();
const load = loadavg().map((n) => n.toFixed(2));
const trees = pickTrees(treeCount);
const results: TreeResult[] = [];
for (const client of clients) results.push(...(await benchClient(client, trees)));
const summaries = clients.map((client) => summarize(client, results));
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
const header = [
  `## Large uploads in one worker — ${started.toISOString().slice(0, 16).replace("T", " ")} UTC`,
  "",
  `- Command: \`npm run bench:uploads -- ${process.argv.slice(2).join(" ")}\``,
  `- planport ${commit}; ${trees.length} trees of ${values.repos} (median body ${((summaries[0]?.medianBodyBytes ?? 0) / 1e6).toFixed(1)} MB); the client's work before each upload: ${values["async-s"]} s asynchronous, then ${busyMs} ms synchronous`,
  `- ${cpus().length} × ${cpus()[0]?.model ?? "unknown"}, Node ${process.version}; load ${load.join(", ")} → ${loadavg()
    .map((n) => n.toFixed(2))
    .join(", ")}; ${Math.round((Date.now() - started.getTime()) / 1000)} s`,
  "",
  "",
].join("\n");
const markdown = `${header}${reportMarkdown(summaries)}`;
console.log(markdown);
if (values.out) writeFileSync(values.out, markdown);
if (values.json) writeFileSync(values.json, `${JSON.stringify(results, null, 2)}\n`);
