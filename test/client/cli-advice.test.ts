import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAKE_SESSION_ID, FAKE_TOKEN, type FakeFeed, startFakeFeed } from "./fake-feed.ts";
import { ev } from "./feed-events.ts";
import { errorAnswer, type HostileServer, startHostileServer } from "./hostile-server.ts";
import { isolatedHome, ndjson, runCli } from "./run-cli.ts";

/**
 * The library's poll errors say what happened and carry the data; the real CLI process turns
 * them into advice in planport's own commands (`planport attach`, `planport status`, `--token`)
 * on its NDJSON error line and on stderr.
 */

let feed: FakeFeed;
let front: HostileServer;
let home: ReturnType<typeof isolatedHome>;
/** What the server in front of the feed answers for events reads (null: the feed's answer). */
let eventsAnswer: { status: number; code: string; message: string } | null;

beforeEach(async () => {
  feed = await startFakeFeed();
  eventsAnswer = null;
  front = await startHostileServer(feed.url, (_req, res, path) => {
    if (!path.endsWith("/events") || eventsAnswer === null) return false;
    return errorAnswer(res, eventsAnswer.status, eventsAnswer.code, eventsAnswer.message);
  });
  home = isolatedHome();
});
afterEach(async () => {
  await front.close();
  await feed.close();
});

const ATTACH = `\`planport attach ${FAKE_SESSION_ID}\``;
const STATUS = `\`planport status ${FAKE_SESSION_ID}\``;

const attach = (...extra: string[]) =>
  runCli(
    [
      "attach",
      FAKE_SESSION_ID,
      "--server",
      front.url,
      "--token",
      FAKE_TOKEN,
      "--interval",
      "20ms",
      ...extra,
    ],
    { env: home.env },
  );

async function errorLine(...extra: string[]) {
  const { code, stdout } = await attach("--json", ...extra);
  const last = ndjson(stdout).at(-1);
  expect(last).toMatchObject({ event: "error", session_id: FAKE_SESSION_ID });
  return { code, reason: last?.reason, message: String(last?.message) };
}

describe("planport attach: advice for a poll that ended without a plan", () => {
  it("after 5 failed polls in a row: the session may still be running, and how to re-attach", async () => {
    for (let i = 0; i < 5; i += 1) feed.eventFaults.push({ status: 503 });
    const line = await errorLine();
    expect(line.code).toBe(6);
    expect(line.message).toBe(
      `Lost contact with ${front.url} after 5 failed polls in a row (last: scripted). ` +
        `The remote session may still be running: re-attach with ${ATTACH}.`,
    );
  });

  it("a token refused in the middle of a poll: check --token, then re-attach", async () => {
    eventsAnswer = { status: 401, code: "unauthorized", message: "token revoked" };
    const line = await errorLine();
    expect(line).toEqual({
      code: 6,
      reason: "network_or_unknown",
      message:
        "The server refused the token (401 unauthorized: token revoked). " +
        `Check --token or PLANPORT_TOKEN, then ${ATTACH}.`,
    });
  });

  it("a session the events route does not know: the unknown-id sentence, exit 6", async () => {
    eventsAnswer = { status: 404, code: "not_found", message: "no such session" };
    const line = await errorLine();
    expect(line.code).toBe(6);
    expect(line.message).toBe(
      `No session ${FAKE_SESSION_ID} is visible to this token: check the id, and that the token is the requester's or an approver's.`,
    );
  });

  it("any other refusal: the session may still be running", async () => {
    eventsAnswer = { status: 400, code: "invalid_request", message: "bad after_id" };
    const line = await errorLine();
    expect(line.message).toBe(
      "Polling failed (400 invalid_request: bad after_id). " +
        `The remote session may still be running: re-attach with ${ATTACH}.`,
    );
  });

  it("timeout_pending: review it, then re-attach", async () => {
    feed.log.append(ev.exitPlanMode("p1"));
    // Long enough for a busy machine's first poll to see the plan pending.
    const line = await errorLine("--timeout", "10s");
    expect(line).toEqual({
      code: 4,
      reason: "timeout_pending",
      message:
        "A plan was submitted for review, but no decision arrived within 10s. " +
        `The session keeps waiting: review it (${STATUS} shows the link), then ${ATTACH}.`,
    });
  });

  it("timeout_no_plan: check the session's status", async () => {
    feed.log.append(ev.text());
    const line = await errorLine("--timeout", "300ms");
    expect(line.code).toBe(5);
    expect(line.message).toBe(
      "No plan was submitted within 300ms. The remote session may have failed to start, or the " +
        `session id ${FAKE_SESSION_ID} is wrong. Check with ${STATUS}.`,
    );
  });

  it("extract_marker_missing: read the plan on the review page", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.toolResult("p1", "yes", false));
    const line = await errorLine();
    expect(line.code).toBe(7);
    expect(line.message).toMatch(/^ExitPlanMode call p1 was answered, but .*extracted\. /);
    expect(line.message).toContain(
      `Open the session's review page to read the plan (${STATUS} shows the link).`,
    );
  });

  it("terminated: the session's own last word, no advice added", async () => {
    feed.log.append(ev.result("error_max_turns", "Raise PLANPORT_MAX_TURNS and start again."));
    const line = await errorLine();
    expect(line.code).toBe(3);
    expect(line.message).toBe(
      "The remote session ended (error_max_turns) before a plan was approved: " +
        "Raise PLANPORT_MAX_TURNS and start again.",
    );
  });

  it("without --json the same advice goes to stderr", async () => {
    feed.log.append(ev.exitPlanMode("p1"));
    const { code, stdout, stderr } = await attach("--timeout", "10s");
    expect(code).toBe(4);
    expect(stdout).toBe("");
    expect(stderr).toContain(`then ${ATTACH}.`);
  });
});

describe("planport status: advice for a refused token", () => {
  it("names the flag and the variable to check", async () => {
    const { code, stderr } = await runCli(
      ["status", FAKE_SESSION_ID, "--server", feed.url, "--token", "wrong"],
      { env: home.env },
    );
    expect(code).toBe(6);
    // The server proved it holds other tokens, not this one: the token was never sent.
    expect(stderr).toContain(
      "does not hold your token, so it was not sent: check --token or PLANPORT_TOKEN",
    );
  });
});
