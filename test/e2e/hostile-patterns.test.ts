import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Event, ScriptedTurn, SnapshotReceipt } from "../../src/protocol/index.ts";
import { ApiClient } from "../support/api-client.ts";
import { resultsFor, waitUntil } from "../support/faults.ts";
import { tarGz } from "../support/tarballs.ts";
import { cpuMs, workerdProcesses } from "../support/workerd-proc.ts";

/**
 * Model-chosen patterns against the real worker under `wrangler dev` (issue 10, findings 1
 * and 7). A backtracking Grep pattern, a backtracking glob and a 100,000-character one-token
 * prompt each held workerd at 100% CPU for minutes — healthz and every other session timed
 * out — and a restart re-ran the unanswered call and froze it again. Here, while each runs,
 * healthz and another session must answer as usual, every call must end with a result in
 * bounded time, and a call the worker is killed in twice is answered with an error instead of
 * being run a third time.
 */

const TOKEN = "e2e-patterns-token";
const auth = { token: TOKEN };
const VARS = { PLANPORT_TOKENS: TOKEN, PLANPORT_ALLOW_SCRIPTED: "true" };
/** What "answers as usual" allows: generous, yet far below the minutes a frozen worker took. */
const RESPONSIVE_MS = 2_000;
/** A probe that gets no answer in this long counts as this long (a frozen worker never answers). */
const PROBE_TIMEOUT_MS = 5_000;
/** Grep's and Glob's wall-time budget is 10 s; a result must follow within this. */
const TOOL_RESULT_MS = 30_000;
/** `[ab]*a[ab]{24}$` defeats RE2's DFA on random a/b lines: linear, but seconds per file. */
const SLOW_PATTERN = "[ab]*a[ab]{24}$";

let worker: WorkerProcess;
let api: ApiClient;
let persistDir: string;
let shared: SnapshotReceipt;
let slow: SnapshotReceipt;
/** A session that just waits on its plan: "another session" whose reads must stay fast. */
let bystander: string;

beforeAll(async () => {
  persistDir = mkdtempSync(join(tmpdir(), "planport-patterns-"));
  worker = await startWorkerProcess({ persistDir, vars: VARS });
  api = new ApiClient((request) => fetch(request), worker.url);
  shared = await upload([
    { name: "redos.txt", body: `${"a".repeat(48)}!\n` },
    { name: `${"a".repeat(40)}`, body: "x\n" },
    { name: "src/app.ts", body: "export const app = 1;\n" },
  ]);
  slow = await upload(abCorpus(8));
  bystander = (
    await api.createSession(auth, {
      prompt: "Wait for review",
      planner: "scripted",
      script: [{ content: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] }],
    })
  ).id;
  await waitUntil(
    async () => ((await api.getSession(auth, bystander)).phase === "plan_ready" ? true : undefined),
    {
      what: "the bystander session to wait on its plan",
    },
  );
}, 120_000);

afterAll(async () => {
  await worker?.kill();
  if (persistDir) rmSync(persistDir, { recursive: true, force: true });
});

async function upload(files: { name: string; body: string }[]): Promise<SnapshotReceipt> {
  const res = await api.uploadSnapshot(auth, await tarGz(files));
  expect(res.status).toBe(201);
  return (await res.json()) as SnapshotReceipt;
}

/** `count` files of 125 random a/b lines of 8,000 characters (1 MB each). */
function abCorpus(count: number): { name: string; body: string }[] {
  let x = 11;
  const line = () => {
    let s = "";
    for (let i = 0; i < 7_999; i++) {
      x = (Math.imul(x, 1103515245) + 12345) | 0;
      s += (x >>> 16) & 1 ? "a" : "b";
    }
    return `${s}\n`;
  };
  const body = Array.from({ length: 125 }, line).join("");
  return Array.from({ length: count }, (_, i) => ({ name: `ab/f${i}.txt`, body }));
}

/** Milliseconds one GET takes; a timeout counts as {@link PROBE_TIMEOUT_MS}. */
async function latency(path: string, headers: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  try {
    const res = await fetch(`${worker.url}${path}`, {
      headers,
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${path} answered ${res.status}`);
  } catch (error) {
    if ((error as Error).name !== "TimeoutError") throw error;
    return PROBE_TIMEOUT_MS;
  }
  return performance.now() - started;
}

/**
 * Probes healthz and the bystander session every 100 ms until `stop` resolves; answers the
 * slowest of each and how many probes ran.
 */
async function probeWhile<T>(
  stop: Promise<T>,
): Promise<{ value: T; healthz: number; session: number; probes: number }> {
  let done = false;
  const finished = stop.finally(() => {
    done = true;
  });
  let healthz = 0;
  let session = 0;
  let probes = 0;
  while (!done) {
    healthz = Math.max(healthz, await latency("/v1/healthz"));
    session = Math.max(
      session,
      await latency(`/v1/sessions/${bystander}`, { authorization: `Bearer ${TOKEN}` }),
    );
    probes++;
    await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
  return { value: await finished, healthz, session, probes };
}

/** One line for the report: the slowest probes and how many ran. */
function describeRun(run: { healthz: number; session: number; probes: number }): string {
  return `slowest healthz ${run.healthz.toFixed(0)} ms, slowest read of another session ${run.session.toFixed(0)} ms, over ${run.probes} probes`;
}

/** The scripted session's events once every call of its script has a result. */
async function runScript(
  script: ScriptedTurn[],
  snapshotId: string,
): Promise<{ events: Event[]; ms: number }> {
  const started = Date.now();
  const session = await api.createSession(auth, {
    prompt: "Search the repository",
    planner: "scripted",
    snapshot_id: snapshotId,
    script,
  });
  const events = await waitUntil(
    async () => {
      const s = await api.getSession(auth, session.id);
      return s.status === "running" ? undefined : api.allEvents(auth, session.id);
    },
    {
      what: "the session to finish its script",
      timeoutMs: TOOL_RESULT_MS * script.length,
      everyMs: 100,
    },
  );
  return { events, ms: Date.now() - started };
}

const call = (id: string, name: string, input: Record<string, unknown>): ScriptedTurn => ({
  content: [{ type: "tool_use", id, name, input }],
});

describe("backtracking patterns against wrangler dev", () => {
  it("answers a ReDoS Grep and an exponential glob at once, and healthz and another session stay responsive", async ({
    annotate,
  }) => {
    const run = await probeWhile(
      runScript(
        [
          call("toolu_redos", "Grep", { pattern: "^(a+)+$", output_mode: "content" }),
          call("toolu_glob", "Glob", { pattern: "*a*a*a*a*a*a*a*a*a*b" }),
          call("toolu_grep_glob", "Grep", { pattern: "x", glob: "*a*a*a*a*a*a*a*a*a*b" }),
        ],
        shared.id,
      ),
    );
    const { events } = run.value;
    expect(resultsFor(events, "toolu_redos")).toEqual(["No matches found"]);
    expect(resultsFor(events, "toolu_glob")).toEqual(["No files found"]);
    expect(resultsFor(events, "toolu_grep_glob")).toEqual(["No matches found"]);
    await annotate(describeRun(run));
    expect(run.value.ms).toBeLessThan(TOOL_RESULT_MS);
    expect(run.healthz).toBeLessThan(RESPONSIVE_MS);
    expect(run.session).toBeLessThan(RESPONSIVE_MS);
  }, 120_000);

  it("keeps healthz and another session responsive through a Grep that runs to its time budget, which ends with a partial answer", async ({
    annotate,
  }) => {
    const run = await probeWhile(
      runScript(
        [call("toolu_slow", "Grep", { pattern: SLOW_PATTERN, output_mode: "count" })],
        slow.id,
      ),
    );
    const [answer] = resultsFor(run.value.events, "toolu_slow");
    await annotate(describeRun(run));
    expect(answer).toContain("(The search reached its time limit of 10 s at ab/f");
    expect(run.value.ms).toBeLessThan(TOOL_RESULT_MS);
    // It ran for seconds and was probed all along.
    expect(run.probes).toBeGreaterThan(10);
    expect(run.healthz).toBeLessThan(RESPONSIVE_MS);
    expect(run.session).toBeLessThan(RESPONSIVE_MS);
  }, 120_000);
});

describe("a 100,000-character single-token prompt against wrangler dev", () => {
  it("reaches plan_ready with the offline planner while healthz and another session stay responsive", async ({
    annotate,
  }) => {
    const snapshot = await upload([
      { name: "README.md", body: "# Tool\n\nRun `npm test`.\n" },
      { name: "package.json", body: '{ "name": "tool", "scripts": { "test": "vitest run" } }\n' },
      { name: "src/index.ts", body: "export function main() {\n  return 1;\n}\n" },
    ]);
    const session = await api.createSession(auth, {
      prompt: "a".repeat(100_000),
      planner: "offline",
      snapshot_id: snapshot.id,
    });
    const run = await probeWhile(
      waitUntil(
        async () => {
          const s = await api.getSession(auth, session.id);
          return s.status === "running" ? undefined : s;
        },
        { what: "the offline planner to finish", timeoutMs: 60_000, everyMs: 100 },
      ),
    );
    await annotate(describeRun(run));
    expect(run.value).toMatchObject({ status: "requires_action", phase: "plan_ready" });
    expect(run.healthz).toBeLessThan(RESPONSIVE_MS);
    expect(run.session).toBeLessThan(RESPONSIVE_MS);
  }, 120_000);
});

describe("SIGKILL in the middle of a Grep, twice", () => {
  it("answers the call with an error after the second restart instead of running it a third time", async () => {
    const session = await api.createSession(auth, {
      prompt: "Search, then plan",
      planner: "scripted",
      snapshot_id: slow.id,
      script: [
        call("toolu_killed", "Grep", { pattern: SLOW_PATTERN, output_mode: "count" }),
        call("toolu_plan", "Write", { file_path: "$PLAN_PATH", content: "# Plan\n" }),
        call("toolu_exit", "ExitPlanMode", {}),
      ],
    });
    for (let kill = 1; kill <= 2; kill++) {
      // The Grep is running when the worker's runtime has burnt a second of CPU on it.
      await api.getSession(auth, session.id); // wakes the object, which re-arms its alarm
      await burning(1_000);
      const events = await api.allEvents(auth, session.id);
      expect(resultsFor(events, "toolu_killed"), `before kill ${kill}`).toEqual([]);
      await worker.kill();
      worker = await startWorkerProcess({ persistDir, port: worker.port, vars: VARS });
    }
    await api.getSession(auth, session.id);
    const settled = await waitUntil(
      async () => {
        const s = await api.getSession(auth, session.id);
        return s.status === "running" ? undefined : s;
      },
      { what: "the session to go on after the second restart", timeoutMs: 60_000, everyMs: 200 },
    );
    expect(settled).toMatchObject({ phase: "plan_ready" });
    const answers = resultsFor(await api.allEvents(auth, session.id), "toolu_killed");
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain("Grep did not finish: it was started 2 times");
  }, 240_000);
});

/** Waits until the workerd hosting the worker has used `ms` more CPU than when called. */
async function burning(ms: number): Promise<void> {
  const host = workerdProcesses(worker.pid).find((p) => p.hostsWorker);
  if (host === undefined) throw new Error("no workerd hosts the worker");
  const from = cpuMs(host.pid);
  await waitUntil(() => (cpuMs(host.pid) - from >= ms ? true : undefined), {
    what: `the worker to burn ${ms} ms of CPU on the Grep`,
    timeoutMs: 30_000,
    everyMs: 50,
  });
}
