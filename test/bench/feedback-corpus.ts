import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { step } from "../../src/planner/loop.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { listedFiles as files, listed } from "../support/plan-lists.ts";

/**
 * The feedback corpus runner: real review comments, read from the fetched datasets (never
 * kept in the repository), each given as a reviewer's rejection of one offline plan, and the
 * revision scored against the expectation written in test/bench/feedback-corpus/corpus.tsv:
 * followed, inverted (it did the opposite: dropped what was not asked to be dropped, or took
 * out the tests that were asked for) or not followed (it changed the lists on words it could
 * not read, or stayed silent about them).
 *
 *   npx tsx test/bench/feedback-corpus.ts [--split held-out|tuning] [--show]
 *
 * Sources (in /work/.mirror, fetched with the session's fetch tool):
 * - aira:<action> — brinnarlyne8585/AIReviewActionAnalysis, _data/<action>/crawled_data/valid_human_reviews.csv,
 *   id = the comment id at the end of Comment_URL (human review comments of merged PRs).
 * - crm:<file> — yhwi-kwon/CodeReveiwAutomation, data/<file>, id = the row's `id`, text = `msg`
 *   (Microsoft CodeReviewer's human review comments).
 * - crc:<path> — busraicoz/crc-py-dataset, <path> (its manually labelled Python review
 *   comments), id = `comment_id`, text = `comment`.
 */

const MIRROR = process.env.MIRROR ?? "/work/.mirror";
const FIXTURE = "test/fixtures/flask-like";
const TASK =
  "add a follow_redirects option to FlaskClient.open that records each redirect response";

type Expect = "cannot-act" | "none" | "add:tests" | "keep:tests";
interface Row {
  split: string;
  source: string;
  id: string;
  repo: string;
  expect: Expect;
}

function git(repo: string, path: string): string {
  return execFileSync("git", ["-C", join(MIRROR, repo, "repo"), "show", `HEAD:${path}`], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
}

/** RFC 4180 rows. */
function csv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else cell += c;
  }
  if (cell !== "" || row.length > 0) rows.push([...row, cell]);
  return rows;
}

const texts = new Map<string, Map<string, string>>();
function textOf(source: string, id: string): string {
  let byId = texts.get(source);
  if (byId === undefined) {
    byId = new Map();
    const [kind, name] = source.split(":") as [string, string];
    if (kind === "aira") {
      const [head, ...rows] = csv(
        git(
          "brinnarlyne8585+AIReviewActionAnalysis",
          `_data/${name}/crawled_data/valid_human_reviews.csv`,
        ),
      );
      const url = head!.indexOf("Comment_URL");
      const body = head!.indexOf("Body");
      for (const r of rows) if (r[url]) byId.set(r[url]!.split("/").pop()!, r[body]!);
    } else if (kind === "crc") {
      const rows = JSON.parse(git("busraicoz+crc-py-dataset", name)) as {
        comment_id: string;
        comment: string;
      }[];
      for (const r of rows)
        if (!byId.has(String(r.comment_id))) byId.set(String(r.comment_id), r.comment);
    } else {
      for (const line of git("yhwi-kwon+CodeReveiwAutomation", `data/${name}`).split("\n")) {
        if (!line.startsWith("{")) continue;
        const d = JSON.parse(line) as { id: unknown; msg?: string };
        if (d.msg && !byId.has(String(d.id))) byId.set(String(d.id), d.msg);
      }
    }
    texts.set(source, byId);
  }
  const text = byId.get(id);
  if (text === undefined) throw new Error(`${source} ${id}: not in the mirror`);
  return text;
}

function walk(dir: string, root = dir, out: Record<string, string> = {}) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, root, out);
    else out[relative(root, p)] = readFileSync(p, "utf8");
  }
  return out;
}

async function run(port: MemoryPort) {
  const planner = offlinePlanner();
  for (let i = 0; i < 60; i++) {
    const r = await step(port, {}, { planner });
    if (r.next !== "continue") return;
  }
}

function notes(plan: string): string {
  const start = plan.indexOf("\n## Revision notes\n");
  if (start === -1) return "";
  const rest = plan.slice(start + 1);
  const end = rest.indexOf("\n## ", 3);
  return end === -1 ? rest : rest.slice(0, end);
}

type Outcome = "followed" | "inverted" | "not followed";
function score(expect: Expect, before: string, after: string): Outcome {
  const b = files(before);
  const a = files(after);
  const dropped = b.filter((p) => !a.includes(p));
  const added = a.filter((p) => !b.includes(p));
  const n = notes(after);
  const said = /I could not act on|I could not tell which file defines/.test(n);
  const silent = /your words asked for no change to them that I could read/.test(n);
  const tests = listed(after, "Tests");
  switch (expect) {
    case "cannot-act":
      return dropped.length > 0
        ? "inverted"
        : said && added.length === 0
          ? "followed"
          : "not followed";
    case "none":
      return dropped.length > 0 ? "inverted" : added.length === 0 ? "followed" : "not followed";
    case "add:tests":
    case "keep:tests":
      return dropped.length > 0 || tests.length === 0
        ? "inverted"
        : !silent || said
          ? "followed"
          : "not followed";
  }
}

const args = process.argv.slice(2);
const only = args.includes("--split") ? args[args.indexOf("--split") + 1] : null;
const show = args.includes("--show");
const rows: Row[] = readFileSync("test/bench/feedback-corpus/corpus.tsv", "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "" && !l.startsWith("#"))
  .map((l) => {
    const [split, source, id, repo, expect] = l.split("\t") as [
      string,
      string,
      string,
      string,
      Expect,
    ];
    return { split, source, id, repo, expect };
  })
  .filter((r) => only === null || r.split === only);

const fixture = walk(FIXTURE);
const first = new MemoryPort({ files: fixture, facts: { planner: "offline", prompt: TASK } });
await run(first);
const plan0 = first.readPlan()!.content;
const tally = new Map<string, Record<Outcome, number>>();
for (const r of rows) {
  const text = textOf(r.source, r.id);
  const port = new MemoryPort({ files: fixture, facts: { planner: "offline", prompt: TASK } });
  await run(port);
  const before = port.readPlan()!.content;
  if (before !== plan0) throw new Error("the first plan is not the same from run to run");
  port.decide(port.pendingWait()!.tool_use_id, { kind: "reject", feedback: text } as never);
  await run(port);
  const after = port.readPlan()!.content;
  const outcome = score(r.expect, before, after);
  for (const key of [r.split, `${r.split}, expect ${r.expect}`]) {
    const t = tally.get(key) ?? { followed: 0, inverted: 0, "not followed": 0 };
    t[outcome]++;
    tally.set(key, t);
  }
  if (show || outcome !== "followed")
    console.log(
      `${outcome.padEnd(12)} ${r.split.padEnd(8)} ${r.source} ${r.id} expect ${r.expect}\n  ${notes(after).split("\n").slice(1).join("\n  ")}`,
    );
}
for (const [split, t] of [...tally].sort(([a], [b]) => a.localeCompare(b))) {
  const total = t.followed + t.inverted + t["not followed"];
  console.log(
    `${split}: ${total} comments — followed ${t.followed} (${((100 * t.followed) / total).toFixed(1)} %), inverted ${t.inverted}, not followed ${t["not followed"]}`,
  );
}
