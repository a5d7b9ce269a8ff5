import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { DEFAULT_RETRY_POLICY } from "../../src/planner/models/retry.ts";
import { retryPolicyFromEnv } from "../../src/planner/models/retry-config.ts";
import type { Event } from "../../src/protocol/index.ts";
import {
  type AnthropicDouble,
  type RecordedRequest,
  type ScriptedResponse,
  startAnthropicDouble,
} from "../client/anthropic-double.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { ApiClient } from "../support/api-client.ts";
import { waitUntil } from "../support/faults.ts";

/**
 * Model faults end to end (issue 6): `wrangler dev` runs the anthropic planner against the
 * Anthropic Messages API TEST DOUBLE over real HTTP. The double answers 429 with retry-after,
 * 529 overloaded, 500, a hang past the per-call timeout, and a malformed body. Each is retried
 * with backoff; after the last attempt the session ends with `result/error_during_execution`
 * and a readable message, and the real CLI exits 3 printing it.
 */

const TOKEN = "e2e-model-faults-token";
const auth = { token: TOKEN };
const LANE = "e2e-model-faults";
/** Short settings, so the whole retry ladder takes seconds (the defaults are 120 s and 4). */
const CALL_TIMEOUT_MS = 1_500;
const ATTEMPTS = 6;
const RETRY_AFTER_S = 1;

const apiError = (type: string, message: string) => ({ type: "error", error: { type, message } });

/** One of each fault, in this order. */
const FAULTS: ScriptedResponse[] = [
  {
    status: 429,
    headers: { "retry-after": String(RETRY_AFTER_S) },
    body: apiError("rate_limit_error", "Number of request tokens has exceeded your rate limit."),
  },
  { status: 529, body: apiError("overloaded_error", "Overloaded") },
  { status: 500, body: apiError("api_error", "Internal server error") },
  // Answers only long after the worker gave up on the call.
  { status: 200, delay_ms: 30_000, body: apiError("api_error", "too late") },
  { status: 200, body: null, raw: '{"id":"msg_broken","type":"message","content":[{"type":"te' },
];

const REPLY_TEXT = "Which database does the service use?";
const reply: ScriptedResponse = {
  status: 200,
  body: {
    id: "msg_ok",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text: REPLY_TEXT }],
    stop_reason: "end_turn",
    usage: { input_tokens: 50, output_tokens: 9 },
  },
};

let double: AnthropicDouble;
let worker: WorkerProcess;
let api: ApiClient;
const persistDir = mkdtempSync(join(tmpdir(), "planport-model-faults-"));

beforeAll(async () => {
  double = await startAnthropicDouble();
  worker = await startWorkerProcess({
    persistDir,
    vars: {
      PLANPORT_TOKENS: TOKEN,
      ANTHROPIC_API_KEY: "sk-test-double",
      ANTHROPIC_BASE_URL: `${double.url}/t/${LANE}`,
      ANTHROPIC_MODEL: "claude-test",
      PLANPORT_MODEL_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
      PLANPORT_MODEL_ATTEMPTS: String(ATTEMPTS),
      PLANPORT_MODEL_BACKOFF_MS: "100",
    },
  });
  api = new ApiClient((request) => fetch(request), worker.url);
}, 60_000);

afterAll(async () => {
  // The worker first: it holds connections to the double.
  await worker?.kill();
  await double?.close();
  rmSync(persistDir, { recursive: true, force: true });
});

const script = (responses: ScriptedResponse[]) => double.script(LANE, responses);
const received = (): Promise<RecordedRequest[]> => double.received(LANE);

const endings = (events: readonly Event[]) =>
  events.filter((e) => e.type === "result" && e.subtype !== "success");

/** Milliseconds between consecutive requests. */
const gaps = (requests: readonly RecordedRequest[]) =>
  requests.slice(1).map((r, i) => r.received_at - (requests[i]?.received_at ?? 0));

describe("model faults through wrangler dev and the Anthropic test double", () => {
  it("retries 429 (after its retry-after), 529, 500, a hung call and a malformed answer, then carries on", async () => {
    const seen = (await received()).length;
    await script([...FAULTS, reply]);
    const session = await api.createSession(auth, { prompt: "Add a health endpoint" });
    expect(session.planner).toBe("anthropic");
    const idle = await waitUntil(
      async () => {
        const s = await api.getSession(auth, session.id);
        return s.status === "running" ? undefined : s;
      },
      { what: "the turn to end", timeoutMs: 60_000, everyMs: 200 },
    );
    expect(idle).toMatchObject({ status: "idle", phase: "needs_input" });
    // The double answers as a model with no known price: the cost is unknown, not a guess.
    expect(idle.usage).toEqual({ input_tokens: 50, output_tokens: 9, cost_usd: null });

    const events = await api.allEvents(auth, session.id);
    expect(endings(events)).toEqual([]);
    const replies = events.filter((e) => e.type === "assistant");
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({
      message: { content: [{ type: "text", text: REPLY_TEXT }] },
    });

    // The double saw the first call and five retries of the very same request.
    const calls = (await received()).slice(seen);
    expect(calls).toHaveLength(FAULTS.length + 1);
    for (const call of calls) expect(call.body).toEqual(calls[0]?.body);
    const [afterRateLimit, , , afterHang] = gaps(calls);
    // Lower bounds only: a retry can never come sooner than the wait it honours.
    expect(afterRateLimit).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000);
    expect(afterHang).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS);
  }, 90_000);

  it("gives up after the last attempt with error_during_execution and a readable message; the CLI exits 3 and prints it", async () => {
    const seen = (await received()).length;
    await script([...FAULTS, FAULTS[4] as ScriptedResponse]);
    const home = isolatedHome();
    const cli = startCli(
      [
        "plan",
        "add a health endpoint",
        "--repo",
        fixtureRepo(),
        "--server",
        worker.url,
        "--token",
        TOKEN,
        "--planner",
        "anthropic",
        "--interval",
        "500ms",
        "--json",
      ],
      { env: home.env },
    );
    const { code, stdout, stderr } = await cli.done;
    expect(code, stderr).toBe(3);
    const lines = ndjson(stdout);
    const sessionId = String(lines[0]?.id);
    const last = lines.at(-1);
    expect(last).toMatchObject({ event: "error", reason: "terminated", session_id: sessionId });
    const message = String(last?.message);
    expect(message).toContain("error_during_execution");
    expect(message).toContain(`The anthropic planner failed after ${ATTEMPTS} attempts`);
    expect(message).toContain(
      "The Anthropic API sent an answer that is not JSON. The session stopped;",
    );

    // The session says the same, in its feed, and is over.
    const events = await api.allEvents(auth, sessionId);
    const [ending] = endings(events);
    expect(endings(events)).toHaveLength(1);
    expect(ending).toMatchObject({ subtype: "error_during_execution", is_error: true });
    expect(message).toContain((ending as { message: string }).message);
    expect(await api.getSession(auth, sessionId)).toMatchObject({
      status: "idle",
      phase: "done",
      outcome: { kind: "terminated", subtype: "error_during_execution" },
    });
    expect((await received()).slice(seen)).toHaveLength(ATTEMPTS);
  }, 90_000);
});

describe("the retry settings", () => {
  it("reads the vars, keeps the defaults for unset ones, and refuses a bad value naming the var", () => {
    expect(retryPolicyFromEnv({})).toEqual(DEFAULT_RETRY_POLICY);
    expect(
      retryPolicyFromEnv({
        PLANPORT_MODEL_TIMEOUT_MS: "1500",
        PLANPORT_MODEL_ATTEMPTS: "6",
        PLANPORT_MODEL_BACKOFF_MS: "100",
      }),
    ).toMatchObject({ callTimeoutMs: 1_500, attempts: 6, minDelayMs: 100, maxDelayMs: 2_000 });
    for (const [name, value] of [
      ["PLANPORT_MODEL_TIMEOUT_MS", "2 minutes"],
      ["PLANPORT_MODEL_TIMEOUT_MS", "0"],
      ["PLANPORT_MODEL_ATTEMPTS", "1.5"],
      ["PLANPORT_MODEL_ATTEMPTS", "100"],
      ["PLANPORT_MODEL_BACKOFF_MS", "-1"],
    ] as const) {
      expect(() => retryPolicyFromEnv({ [name]: value })).toThrow(`${name} is "${value}"`);
    }
  });
});
