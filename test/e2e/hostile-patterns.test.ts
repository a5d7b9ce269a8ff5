import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Event, ScriptedTurn, SnapshotReceipt } from "../../src/protocol/index.ts";
import { abCorpus } from "../support/ab-corpus.ts";
import { ApiClient } from "../support/api-client.ts";
import { resultsFor, waitUntil } from "../support/faults.ts";
import { tarGz } from "../support/tarballs.ts";
import { cpuMs, workerdProcesses } from "../support/workerd-proc.ts";

/**
 * Model-chosen patterns against the real worker under `wrangler dev` (issue 10, findings 1
 * and 7). A backtracking Grep pattern, a backtracking glob and a 100,000-character one-token
 * prompt each held workerd at 100% CPU for minutes — healthz and every other session timed
 * out — and a restart re-ran the unanswered call and froze it again. Here every call ends with
 * its result, healthz and another session answer alongside (and, while a Grep runs for seconds,
 * between its start and its result: ordering, not milliseconds), and a call the worker is killed
 * in twice is answered with an error instead of being run a third time. How fast they answer is
 * measured by `npm run bench` (test/bench/grep.ts), not asserted here.
 */

const TOKEN = "e2e-patterns-token";
const auth = { token: TOKEN };
const VARS = { PLANPORT_TOKENS: TOKEN, PLANPORT_ALLOW_SCRIPTED: "true" };
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

/** Answers when a GET of `path` was answered 200; a worker that froze answers late, or never. */
async function probe(path: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${worker.url}${path}`, { headers });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${path} answered ${res.status}`);
}

/** Where a session's tool call is: not yet called, running (called, no result), or answered. */
async function callState(sessionId: string, toolUseId: string) {
  const events = await api.allEvents(auth, sessionId);
  if (resultsFor(events, toolUseId).length > 0) return "answered";
  const called = events.some(
    (e) =>
      e.type === "assistant" &&
      e.message.content.some((b) => b.type === "tool_use" && b.id === toolUseId),
  );
  return called ? "running" : "not_called";
}

/**
 * Reads healthz and the bystander session, one round after another, until `stop` resolves.
 * Counts the rounds, and — when `watch` names a session's tool call — the rounds whose answers
 * came back while that call was running: sent after the call was recorded, and answered before
 * its result was. A worker frozen by the call answers nothing in that window (it answers after
 * the call, or never); no clock is read.
 */
async function probeWhile<T>(
  stop: Promise<T>,
  watch?: { sessionId: string; toolUseId: string },
): Promise<{ value: T; rounds: number; roundsWhileRunning: number }> {
  let done = false;
  const finished = stop.finally(() => {
    done = true;
  });
  let rounds = 0;
  let roundsWhileRunning = 0;
  while (!done) {
    const before = watch && (await callState(watch.sessionId, watch.toolUseId));
    await probe("/v1/healthz");
    await probe(`/v1/sessions/${bystander}`, { authorization: `Bearer ${TOKEN}` });
    const after = watch && (await callState(watch.sessionId, watch.toolUseId));
    rounds++;
    if (before === "running" && after === "running") roundsWhileRunning++;
    await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
  // One more round after the end: the worker still answers both.
  await probe("/v1/healthz");
  await probe(`/v1/sessions/${bystander}`, { authorization: `Bearer ${TOKEN}` });
  return { value: await finished, rounds: rounds + 1, roundsWhileRunning };
}

/** Starts a scripted session; `events` resolves once every call of its script has a result. */
async function startScript(
  script: ScriptedTurn[],
  snapshotId: string,
): Promise<{ id: string; events: Promise<Event[]> }> {
  const session = await api.createSession(auth, {
    prompt: "Search the repository",
    planner: "scripted",
    snapshot_id: snapshotId,
    script,
  });
  const events = waitUntil(
    async () => {
      const s = await api.getSession(auth, session.id);
      return s.status === "running" ? undefined : api.allEvents(auth, session.id);
    },
    // Only a hang guard: the verdict is what the events say.
    { what: "the session to finish its script", timeoutMs: 100_000, everyMs: 100 },
  );
  return { id: session.id, events };
}

const call = (id: string, name: string, input: Record<string, unknown>): ScriptedTurn => ({
  content: [{ type: "tool_use", id, name, input }],
});

describe("backtracking patterns against wrangler dev", () => {
  it("answers a ReDoS Grep and an exponential glob, and healthz and another session answer alongside", async ({
    annotate,
  }) => {
    const script = await startScript(
      [
        call("toolu_redos", "Grep", { pattern: "^(a+)+$", output_mode: "content" }),
        call("toolu_glob", "Glob", { pattern: "*a*a*a*a*a*a*a*a*a*b" }),
        call("toolu_grep_glob", "Grep", { pattern: "x", glob: "*a*a*a*a*a*a*a*a*a*b" }),
      ],
      shared.id,
    );
    const run = await probeWhile(script.events);
    await annotate(`${run.rounds} rounds of healthz and another session answered`);
    expect(resultsFor(run.value, "toolu_redos")).toEqual(["No matches found"]);
    expect(resultsFor(run.value, "toolu_glob")).toEqual(["No files found"]);
    expect(resultsFor(run.value, "toolu_grep_glob")).toEqual(["No matches found"]);
  }, 120_000);

  it("answers healthz and another session while a Grep runs to its time budget, which ends with a partial answer", async ({
    annotate,
  }) => {
    const script = await startScript(
      [call("toolu_slow", "Grep", { pattern: SLOW_PATTERN, output_mode: "count" })],
      slow.id,
    );
    const run = await probeWhile(script.events, {
      sessionId: script.id,
      toolUseId: "toolu_slow",
    });
    const [answer] = resultsFor(run.value, "toolu_slow");
    await annotate(`${run.roundsWhileRunning} of ${run.rounds} rounds answered while the Grep ran`);
    expect(answer).toContain("(The search reached its time limit of 10 s at ab/f");
    // A worker the Grep froze would answer no round between its start and its result.
    expect(run.roundsWhileRunning).toBeGreaterThanOrEqual(3);
  }, 120_000);
});

describe("a 100,000-character single-token prompt against wrangler dev", () => {
  it("reaches plan_ready with the offline planner, and healthz and another session answer alongside", async ({
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
        // Only a hang guard: the verdict is the phase reached.
        { what: "the offline planner to finish", timeoutMs: 100_000, everyMs: 100 },
      ),
    );
    await annotate(`${run.rounds} rounds of healthz and another session answered`);
    expect(run.value).toMatchObject({ status: "requires_action", phase: "plan_ready" });
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
