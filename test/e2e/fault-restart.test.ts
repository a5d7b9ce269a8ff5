import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APPROVED_PLAN_MARKER,
  type ScriptedTurn,
  type SnapshotReceipt,
  TELEPORT_SENTINEL,
} from "../../src/protocol/index.ts";
import { ndjson } from "../client/run-cli.ts";
import { type FaultRig, pollsOf, startFaultRig } from "../support/fault-rig.ts";
import {
  assistantTexts,
  exitPlanModeCalls,
  feedProblems,
  resultsFor,
  waitUntil,
} from "../support/faults.ts";
import { failedRequest, longestFailureRun } from "../support/faults-node.ts";
import { tarGz } from "../support/tarballs.ts";

/**
 * Fault injection with real processes (issue 6): `wrangler dev` is SIGKILLed (the whole
 * process group, workerd included) in the middle of planning and in the middle of a decision,
 * then restarted on the same persist directory and port, while the real CLI is attached. A tap
 * between the CLI and the worker records every poll, so the failed polls are counted from the
 * outside rather than taken on the CLI's word.
 */

const TOKEN = "e2e-fault-token";
const auth = { token: TOKEN };
const VARS = {
  PLANPORT_TOKENS: TOKEN,
  PLANPORT_ALLOW_SCRIPTED: "true",
  PLANPORT_EXECUTION: "overlay",
};
/**
 * The CLI's poll interval. A restart of `wrangler dev` takes about 3 s here; 5 failures in a
 * row need 4 intervals (8 s), so the attached CLI must ride through with room to spare.
 */
const POLL_INTERVAL = "2s";
/** Latency of each scripted model turn: long enough to kill the worker inside one. */
const TURN_DELAY_MS = 1_200;
const PLAN_TEXT = "# Plan\n\n1. Add GET /health returning {ok: true}.\n2. Test it.\n";

let rig: FaultRig;
let snapshotId: string;

beforeAll(async () => {
  rig = await startFaultRig({ token: TOKEN, vars: VARS, pollInterval: POLL_INTERVAL });
  const upload = await rig.api.uploadSnapshot(
    auth,
    await tarGz([
      { name: "README.md", body: "# Service\n\nA tiny HTTP service.\n" },
      {
        name: "src/server.ts",
        body: "export function listen(port: number) {\n  return port;\n}\n",
      },
    ]),
  );
  snapshotId = ((await upload.json()) as SnapshotReceipt).id;
}, 60_000);

afterAll(() => rig?.close());

/** `turns` research turns (each with model latency), then the plan, then ExitPlanMode. */
function planningScript(turns: number): ScriptedTurn[] {
  const research: ScriptedTurn[] = Array.from({ length: turns }, (_, i) => ({
    delay_ms: TURN_DELAY_MS,
    content: [
      { type: "text", text: `Research step ${i + 1}.` },
      { type: "tool_use", name: "Read", input: { file_path: "src/server.ts" } },
    ],
  }));
  return [
    ...research,
    {
      content: [
        { type: "tool_use", name: "Write", input: { file_path: "$PLAN_PATH", content: PLAN_TEXT } },
      ],
    },
    { content: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] },
    // After an approval: carry the plan out in the cloud, then finish.
    {
      content: [
        {
          type: "tool_use",
          name: "Write",
          input: { file_path: "src/health.ts", content: "export const health = { ok: true };\n" },
        },
      ],
    },
    { content: [{ type: "text", text: "Done: added src/health.ts." }] },
  ];
}

async function createSession(turns: number): Promise<string> {
  const session = await rig.api.createSession(auth, {
    prompt: "Add a health endpoint",
    snapshot_id: snapshotId,
    planner: "scripted",
    script: planningScript(turns),
  });
  return session.id;
}

describe("SIGKILL of wrangler dev while a session is planning", () => {
  it("loses and repeats no event, resumes the loop by itself, and the attached CLI rides through to the teleport", async () => {
    const attached = await createSession(5);
    // Nobody polls this one: only the Durable Object alarm, persisted across the crash, can move it.
    const unattended = await createSession(5);
    const cli = rig.attach(attached);
    await cli.waitForStdout('"phase":"running"', 30_000);
    // In the middle of planning: two replies stored, a third one "thinking" when the kill lands.
    await waitUntil(
      async () =>
        assistantTexts(await rig.api.allEvents(auth, attached)).length >= 2 ? true : undefined,
      { what: "two research steps" },
    );
    await new Promise((resolve) => setTimeout(resolve, TURN_DELAY_MS / 3));
    const before = await rig.api.allEvents(auth, attached);
    const unattendedBefore = await rig.api.allEvents(auth, unattended);
    expect(exitPlanModeCalls(before)).toEqual([]);

    const { killAt, killedAt, upAt } = await rig.crashAndRestart(attached);

    // The unattended session moves on its own after the restart: its persisted alarm fired.
    await new Promise((resolve) => setTimeout(resolve, TURN_DELAY_MS * 2));
    const lookedAt = Date.now();
    const unattendedAfter = await rig.api.allEvents(auth, unattended);
    expect(feedProblems(unattendedBefore, unattendedAfter)).toEqual([]);
    const movedAlone = unattendedAfter.filter((e) => {
      const at = Date.parse(e.created_at);
      return at > killedAt && at < lookedAt;
    });
    expect(movedAlone.length).toBeGreaterThan(0);

    // The attached CLI sees the plan and gets the teleport.
    await cli.waitForStdout('"phase":"plan_ready"', 60_000);
    const events = await rig.api.allEvents(auth, attached);
    const [call] = exitPlanModeCalls(events);
    expect(call).toBeDefined();
    await rig.api.decide(auth, attached, { tool_use_id: call, decision: "teleport" });
    const { code, stdout, stderr } = await cli.done;
    expect(code, stderr).toBe(0);
    const lines = ndjson(stdout);
    expect(lines.filter((l) => l.event === "error")).toEqual([]);
    expect(lines.at(-1)).toMatchObject({
      event: "outcome",
      kind: "teleport",
      execution_target: "local",
      plan: PLAN_TEXT,
    });

    // No event lost or duplicated: the feed read before the crash is a prefix of the one after,
    // ids are 1…n with no gap, and every scripted turn was recorded exactly once.
    const after = await rig.api.allEvents(auth, attached);
    expect(feedProblems(before, after)).toEqual([]);
    expect(assistantTexts(after)).toEqual([1, 2, 3, 4, 5].map((n) => `Research step ${n}.`));
    expect(exitPlanModeCalls(after)).toEqual([call]);
    const answers = resultsFor(after, call ?? "");
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain(`${TELEPORT_SENTINEL}\n${PLAN_TEXT}`);

    // The CLI noticed the outage, and rode through it: at most 4 failed polls in a row.
    const polls = rig.tap.requests.filter(pollsOf(attached));
    // A poll in flight when the kill lands fails too; allow half a second either side.
    const outage = (r: { at: number }) => r.at >= killAt - 500 && r.at <= upAt + 500;
    expect(polls.filter((r) => failedRequest(r) && outage(r)).length).toBeGreaterThan(0);
    expect(polls.filter((r) => failedRequest(r) && !outage(r))).toEqual([]);
    expect(longestFailureRun(rig.tap.requests, pollsOf(attached))).toBeLessThanOrEqual(4);
  }, 120_000);
});

describe("SIGKILL of wrangler dev during a decision", () => {
  it("an approval whose answer was lost landed exactly once; the retry is refused, the CLI reports the approval and the cloud finishes the work", async () => {
    const id = await createSession(0);
    const cli = rig.attach(id);
    await cli.waitForStdout('"phase":"plan_ready"', 30_000);
    const before = await rig.api.allEvents(auth, id);
    const [call] = exitPlanModeCalls(before);

    // The decision reaches the worker and commits; the worker dies before its answer gets back.
    let answered: number | null = null;
    rig.tap.beforeRelay = async (request) => {
      if (!(request.method === "POST" && request.path.endsWith("/decision"))) return true;
      answered = request.status;
      await rig.worker.kill();
      return false;
    };
    const lost = await fetch(`${rig.tap.url}/v1/sessions/${id}/decision`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ tool_use_id: call, decision: "approve" }),
    }).catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(Error);
    expect(answered, "the worker accepted the decision before it died").toBe(200);
    rig.tap.beforeRelay = null;
    const { killedAt } = await rig.crashAndRestart(id);

    // The browser retries: the decision is already there, so the retry is refused, not applied twice.
    const retry = await rig.api.call("POST", `/v1/sessions/${id}/decision`, auth, {
      json: { tool_use_id: call, decision: "approve" },
    });
    expect(retry.status).toBe(409);
    expect(((await retry.json()) as { error: { code: string } }).error.code).toBe(
      "already_decided",
    );

    const { code, stdout, stderr } = await cli.done;
    expect(code, stderr).toBe(0);
    expect(ndjson(stdout).at(-1)).toMatchObject({
      event: "outcome",
      kind: "approved",
      execution_target: "remote",
      plan: PLAN_TEXT,
    });
    expect(longestFailureRun(rig.tap.requests, pollsOf(id))).toBeLessThanOrEqual(4);

    // The step the approval scheduled survived the crash: the cloud carries the plan out.
    const done = await waitUntil(
      async () => {
        const session = await rig.api.getSession(auth, id);
        return session.phase === "done" ? session : undefined;
      },
      { what: "remote execution to finish", timeoutMs: 30_000 },
    );
    expect(done.outcome).toMatchObject({ kind: "approved", execution_target: "remote" });
    expect(await rig.api.changes(auth, id)).toContain("+++ b/src/health.ts");
    const after = await rig.api.allEvents(auth, id);
    expect(feedProblems(before, after)).toEqual([]);
    const answers = resultsFor(after, call ?? "");
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain(`${APPROVED_PLAN_MARKER}\n${PLAN_TEXT}`);
    expect(after.some((e) => Date.parse(e.created_at) > killedAt)).toBe(true);
  }, 120_000);

  it("a teleport fired as the worker is killed lands exactly once, whether it got in before the kill or on the retry", async () => {
    const id = await createSession(0);
    const cli = rig.attach(id);
    await cli.waitForStdout('"phase":"plan_ready"', 30_000);
    const before = await rig.api.allEvents(auth, id);
    const [call] = exitPlanModeCalls(before);
    const decision = { tool_use_id: call, decision: "teleport" };

    const firing = rig.api
      .call("POST", `/v1/sessions/${id}/decision`, auth, { json: decision })
      .catch((error: unknown) => error);
    await rig.crashAndRestart(id);
    const first = await firing;
    const firstLanded = first instanceof Response && first.status === 200;

    const retry = await rig.api.call("POST", `/v1/sessions/${id}/decision`, auth, {
      json: decision,
    });
    // Either the first attempt landed (its answer may be lost) and the retry is refused, or it
    // never arrived and the retry lands: never both, never neither.
    expect(retry.status === 200 || retry.status === 409).toBe(true);
    if (firstLanded) expect(retry.status).toBe(409);

    const { code, stdout, stderr } = await cli.done;
    expect(code, stderr).toBe(0);
    expect(ndjson(stdout).at(-1)).toMatchObject({
      event: "outcome",
      kind: "teleport",
      plan: PLAN_TEXT,
    });
    const after = await rig.api.allEvents(auth, id);
    expect(feedProblems(before, after)).toEqual([]);
    const answers = resultsFor(after, call ?? "");
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain(`${TELEPORT_SENTINEL}\n${PLAN_TEXT}`);
    expect((await rig.api.getSession(auth, id)).status).toBe("archived");
    expect(longestFailureRun(rig.tap.requests, pollsOf(id))).toBeLessThanOrEqual(4);
  }, 120_000);
});
