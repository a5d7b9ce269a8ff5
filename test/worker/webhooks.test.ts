import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app.ts";
import { readConfig } from "../../src/config.ts";
import type { Session } from "../../src/protocol/index.ts";
import {
  afterFailure,
  announcedOf,
  budgetSpent,
  changesOf,
  leaseUntil,
  resultOfStatus,
  retryAfterMs,
  retryDelayMs,
  signatureOf,
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  WEBHOOK_FIRST_DELAY_MS,
  WEBHOOK_RETRY_BUDGET_MS,
  webhookBody,
  webhookId,
} from "../../src/webhooks/events.ts";
import { sendWebhook } from "../../src/webhooks/send.ts";
import { ApiClient } from "../support/api-client.ts";
import { ALICE, errorCode } from "../support/worker/sessions.ts";

/**
 * Webhooks, the pure part: which changes make events, the payload, its signature, the retry
 * schedule, what an answer means, and the two settings. The deliveries themselves are in
 * webhooks-delivery.test.ts; under `wrangler dev` in test/e2e/webhooks.test.ts.
 */

const SECRET = "a-webhook-secret-of-32-characters";

describe("changesOf", () => {
  const approved = { kind: "approved", execution_target: "remote" } as Session["outcome"];
  it.each([
    ["a new session's first phase", null, { phase: "running", outcome: null }, ["session.phase"]],
    [
      "a phase change",
      { phase: "running", outcome: null },
      { phase: "plan_ready", outcome: null },
      ["session.phase"],
    ],
    ["no change", { phase: "running", outcome: null }, { phase: "running", outcome: null }, []],
    [
      "an outcome with a phase change",
      { phase: "plan_ready", outcome: null },
      { phase: "executing", outcome: approved },
      ["session.phase", "session.outcome"],
    ],
    [
      "the same outcome again",
      announcedOf({ phase: "executing", outcome: approved }),
      { phase: "done", outcome: approved },
      ["session.phase"],
    ],
  ] as const)("%s", (_what, before, now, expected) => {
    expect(changesOf(before, now as Pick<Session, "phase" | "outcome">)).toEqual(expected);
  });

  it("a changed outcome is announced again, an unchanged one never", () => {
    const before = announcedOf({ phase: "done", outcome: approved });
    const terminated = { kind: "terminated", subtype: "archived" } as Session["outcome"];
    expect(changesOf(before, { phase: "done", outcome: terminated })).toEqual(["session.outcome"]);
    expect(changesOf(before, { phase: "done", outcome: approved })).toEqual([]);
  });
});

describe("the payload", () => {
  it("ids are per session and event, the same every time they are made", () => {
    expect(webhookId("ses_01jq3v8k2c7x4m9p0a5b6d7e8f", 3)).toBe(
      "whk_01jq3v8k2c7x4m9p0a5b6d7e8f_0003",
    );
    expect(webhookId("ses_a", 12)).not.toBe(webhookId("ses_b", 12));
  });

  it("has the id, type, creation time and session, and nothing else", () => {
    const session = { id: "ses_x", phase: "plan_ready" } as unknown as Session;
    const body = JSON.parse(
      webhookBody("whk_x_0001", "session.phase", Date.UTC(2026, 0, 2), session),
    );
    expect(body).toEqual({
      id: "whk_x_0001",
      type: "session.phase",
      created_at: "2026-01-02T00:00:00.000Z",
      session,
    });
  });

  it("is signed with HMAC-SHA256 of the raw body, as hex after sha256= (RFC 4231 case 2)", async () => {
    expect(await signatureOf("Jefe", "what do ya want for nothing?")).toBe(
      "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    const a = await signatureOf(SECRET, '{"id":"1"}');
    expect(a).not.toBe(await signatureOf(SECRET, '{"id":"2"}'));
    expect(a).not.toBe(await signatureOf(`${SECRET}x`, '{"id":"1"}'));
  });
});

describe("the retry schedule", () => {
  it("doubles from 10 s and is capped at 10 minutes", () => {
    const delays = Array.from({ length: 7 }, (_, i) => retryDelayMs(i + 1));
    expect(delays).toEqual([10, 20, 40, 80, 160, 320, 600].map((s) => s * 1000));
    expect(retryDelayMs(50)).toBe(600_000);
  });

  it("retries for 20 minutes after the first attempt, the last one right at the end, then drops", () => {
    // A receiver that fails at once every time: attempts at 0 s, 10 s, 30 s … 630 s, 1200 s.
    const at = [0];
    for (;;) {
      const now = at.at(-1) as number;
      const next = afterFailure(at.length, null, now, 0);
      if (next.kind === "drop") break;
      at.push(next.atMs);
    }
    expect(at.map((ms) => ms / 1000)).toEqual([0, 10, 30, 70, 150, 310, 630, 1200]);
    expect(WEBHOOK_RETRY_BUDGET_MS).toBe(1_200_000);
    // The budget is in time, not attempts, counted from the first attempt.
    expect(afterFailure(2, null, 1_000, 1_000)).toEqual({ kind: "retry", atMs: 21_000 });
    expect(afterFailure(1, null, 1_195_000, 0)).toEqual({ kind: "drop" });
  });

  it("waits at least the backoff whatever Retry-After says: 0 is no hot loop, more waits longer (≤ 10 minutes)", () => {
    expect(afterFailure(1, 0, 0, 0)).toEqual({ kind: "retry", atMs: WEBHOOK_FIRST_DELAY_MS });
    expect(afterFailure(3, 1_000, 100_000, 0)).toEqual({ kind: "retry", atMs: 140_000 });
    expect(afterFailure(1, 120_000, 0, 0)).toEqual({ kind: "retry", atMs: 120_000 });
    expect(afterFailure(1, 3_600_000, 0, 0)).toEqual({ kind: "retry", atMs: 600_000 });
    // Never past the budget: a long Retry-After near its end is cut to it.
    expect(afterFailure(2, 600_000, 900_000, 0)).toEqual({ kind: "retry", atMs: 1_200_000 });
  });

  it("leases an attempt past its timeout and the backoff, within the budget; a lease past it is spent", () => {
    expect(leaseUntil(1, 0, 0)).toBe(WEBHOOK_ATTEMPT_TIMEOUT_MS + 10_000);
    expect(leaseUntil(1, 0, 0)).toBeGreaterThan(WEBHOOK_ATTEMPT_TIMEOUT_MS);
    // An attempt at 630 s that never reports back is tried again at the end of the budget …
    expect(leaseUntil(7, 630_000, 0)).toBe(1_200_000);
    const lost = { attempts: 7, next_attempt_at: 1_200_000, first_attempt_at: 0 };
    expect(budgetSpent(lost)).toBe(false);
    // … and one made there is given its timeout, then dropped.
    const last = { attempts: 8, next_attempt_at: leaseUntil(8, 1_200_000, 0), first_attempt_at: 0 };
    expect(last.next_attempt_at).toBe(1_200_000 + WEBHOOK_ATTEMPT_TIMEOUT_MS);
    expect(budgetSpent(last)).toBe(true);
    // A delivery never tried is tried, however late its alarm came.
    expect(budgetSpent({ attempts: 0, next_attempt_at: 0, first_attempt_at: null })).toBe(false);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1);
    expect(retryAfterMs("120", now)).toBe(120_000);
    expect(retryAfterMs(" 3 ", now)).toBe(3_000);
    expect(retryAfterMs(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(retryAfterMs(new Date(now - 30_000).toUTCString(), now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs("-5", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe("what an answer means", () => {
  it.each([
    [200, "delivered"],
    [204, "delivered"],
    [299, "delivered"],
    [410, "gone"],
    [301, "failed"],
    [404, "failed"],
    [429, "failed"],
    [500, "failed"],
    [503, "failed"],
  ] as const)("HTTP %i → %s", (status, kind) => {
    expect(resultOfStatus(status, null, 0).kind).toBe(kind);
  });

  it("a failure carries the receiver's Retry-After", () => {
    expect(resultOfStatus(429, "7", 0)).toEqual({
      kind: "failed",
      reason: "the receiver answered HTTP 429",
      retryAfterMs: 7_000,
    });
  });
});

describe("one attempt", () => {
  const target = { url: "https://hooks.example.test/T0/B0/key-in-the-path", secret: SECRET };
  const delivery = {
    id: "whk_x_0001",
    type: "session.phase" as const,
    body: '{"id":"whk_x_0001"}',
  };

  it("POSTs the body with its signature, and a receiver that never answers is a timed-out failure", async () => {
    const seen: Request[] = [];
    const hanging = (request: Request) => {
      seen.push(request);
      return new Promise<Response>((_resolve, reject) => {
        request.signal.addEventListener("abort", () => reject(new Error("aborted")));
      });
    };
    const result = await sendWebhook(hanging, target, delivery, Date.now, 50);
    expect(result).toEqual({
      kind: "failed",
      reason: "no answer from https://hooks.example.test within 0.05 s",
      retryAfterMs: null,
    });
    const request = seen[0] as Request;
    expect(request.method).toBe("POST");
    expect(request.headers.get("x-planport-signature")).toBe(
      await signatureOf(SECRET, delivery.body),
    );
    expect(await request.text()).toBe(delivery.body);
  });

  it("a network error names the receiver's origin only, never the rest of its URL", async () => {
    const broken = async () => {
      throw new Error(`connect ECONNREFUSED for ${target.url}`);
    };
    const result = await sendWebhook(broken, target, delivery, Date.now);
    expect(result.kind).toBe("failed");
    const reason = result.kind === "failed" ? result.reason : "";
    expect(reason).toContain("https://hooks.example.test");
    expect(reason).not.toContain("key-in-the-path");
  });
});

describe("the settings", () => {
  const read = (vars: Record<string, string>) => readConfig(vars);

  it("no URL: no webhooks (a secret alone is ignored)", () => {
    const none = read({});
    expect(none.ok && none.value.webhook).toBeNull();
    const secretOnly = read({ PLANPORT_WEBHOOK_URL: " ", PLANPORT_WEBHOOK_SECRET: SECRET });
    expect(secretOnly.ok && secretOnly.value.webhook).toBeNull();
  });

  it("a URL and a secret: the target", () => {
    const config = read({
      PLANPORT_WEBHOOK_URL: "https://hooks.example.test/in?token=t",
      PLANPORT_WEBHOOK_SECRET: SECRET,
    });
    expect(config.ok && config.value.webhook).toEqual({
      url: "https://hooks.example.test/in?token=t",
      secret: SECRET,
    });
    const local = read({
      PLANPORT_WEBHOOK_URL: "http://127.0.0.1:9/",
      PLANPORT_WEBHOOK_SECRET: SECRET,
    });
    expect(local.ok).toBe(true);
  });

  it.each([
    ["not a URL", "hooks.example.test/in", SECRET, /PLANPORT_WEBHOOK_URL is not a URL/],
    ["ftp", "ftp://hooks.example.test/in", SECRET, /PLANPORT_WEBHOOK_URL is not an https:/],
    ["javascript", "javascript:alert(1)", SECRET, /PLANPORT_WEBHOOK_URL is not an https:/],
    ["file", "file:///etc/passwd", SECRET, /PLANPORT_WEBHOOK_URL is not an https:/],
    ["credentials", "https://u:p@hooks.example.test/", SECRET, /holds credentials/],
    ["no secret", "https://hooks.example.test/", "", /PLANPORT_WEBHOOK_SECRET is not set/],
    ["a short secret", "https://hooks.example.test/", "short-secret", /has 12 characters/],
  ])("refuses %s, naming the var and never echoing the value", (_what, url, secret, message) => {
    const config = read({ PLANPORT_WEBHOOK_URL: url, PLANPORT_WEBHOOK_SECRET: secret });
    expect(config.ok).toBe(false);
    const error = config.ok ? "" : config.error;
    expect(error).toMatch(message);
    expect(error).not.toContain(url.slice(6));
    if (secret !== "") expect(error).not.toContain(secret);
  });

  it("the API answers 500 server_misconfigured naming the var for a URL that is not http(s)", async () => {
    const app = createApp();
    const api = new ApiClient(
      async (request) =>
        await app.fetch(request, {
          ...env,
          PLANPORT_WEBHOOK_URL: "gopher://hooks.example.test/",
          PLANPORT_WEBHOOK_SECRET: SECRET,
        }),
    );
    const res = await api.call("GET", "/v1/sessions", ALICE);
    expect(res.status).toBe(500);
    const body = (await res.clone().json()) as { error: { message: string } };
    expect(await errorCode(res)).toBe("server_misconfigured");
    expect(body.error.message).toContain("PLANPORT_WEBHOOK_URL");
    expect(body.error.message).not.toContain(SECRET);
  });
});
