import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Session } from "../../src/protocol/index.ts";
import type { WebhookPayload } from "../../src/webhooks/events.ts";
import { ApiClient } from "../support/api-client.ts";

/**
 * Webhooks under `wrangler dev` (CONTRACT "Extensions" → "Webhooks"), with a real HTTP receiver
 * in this process: every phase change and the outcome arrive signed; a receiver that fails an
 * attempt gets it again with the same id; one that answers `503` + `Retry-After: 0` is not
 * hammered (the backoff is a floor); an approver's request with a forged `Host` never changes
 * the links the receiver gets; a receiver that never answers does not slow the planning (timed
 * against a baseline in the same test, as a ratio); a URL that is not http(s) is refused with
 * 500 server_misconfigured naming the var.
 */

const TOKEN = "e2e-webhooks-token";
/** bob's token: an approver of alice's plans (alice is {@link TOKEN}). */
const BOB_TOKEN = "e2e-webhooks-bob";
const SECRET = "e2e-webhooks-secret-0123456789abcdef";
const auth = { token: TOKEN };
const PROMPT = "Add a health endpoint to the server";
const DEADLINE_MS = 90_000;

type Mode = "accept" | "fail-first" | "unavailable-twice" | "hang";

interface Hit {
  at: number;
  signatureValid: boolean;
  body: string;
  payload: WebhookPayload;
}

/** The receiver: checks each signature, records every request, answers as `mode` says. */
function startReceiver() {
  const hits: Hit[] = [];
  const failed = new Set<string>();
  const hanging: ServerResponse[] = [];
  const state = { mode: "accept" as Mode };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const expected = `sha256=${createHmac("sha256", SECRET).update(raw).digest("hex")}`;
      const given = String(req.headers["x-planport-signature"] ?? "");
      const signatureValid =
        given.length === expected.length &&
        timingSafeEqual(Buffer.from(given), Buffer.from(expected));
      const payload = JSON.parse(raw.toString("utf8")) as WebhookPayload;
      hits.push({ at: Date.now(), signatureValid, body: raw.toString("utf8"), payload });
      if (state.mode === "hang") {
        hanging.push(res);
        return;
      }
      if (state.mode === "fail-first" && !failed.has(payload.id)) {
        failed.add(payload.id);
        res.writeHead(503, { "retry-after": "1" }).end("busy");
        return;
      }
      // Down for two attempts of each delivery, asking to be tried again at once.
      const seen = hits.filter((h) => h.payload.id === payload.id).length;
      if (state.mode === "unavailable-twice" && seen <= 2) {
        res.writeHead(503, { "retry-after": "0" }).end("down");
        return;
      }
      res.writeHead(204).end();
    });
  });
  return {
    hits,
    state,
    forSession: (id: string) => hits.filter((h) => h.payload.session.id === id),
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/planport`),
        ),
      ),
    close: () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const receiver = startReceiver();
const persist = mkdtempSync(join(tmpdir(), "planport-e2e-webhooks-"));
let worker: WorkerProcess;
let api: ApiClient;

beforeAll(async () => {
  const url = await receiver.listen();
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: {
      PLANPORT_TOKENS: `alice:${TOKEN},bob:${BOB_TOKEN}`,
      PLANPORT_PLANNER: "offline",
      PLANPORT_WEBHOOK_URL: url,
      PLANPORT_WEBHOOK_SECRET: SECRET,
    },
  });
  api = new ApiClient((request) => fetch(request), worker.url);
}, 120_000);

/**
 * A request to the worker whose `Host` header names another host (what a proxy that passes
 * Host through unchecked lets anyone send); node:http, as fetch will not forge Host.
 */
function withHost(
  host: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const target = new URL(worker.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method,
        path,
        headers: {
          host,
          authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            json: JSON.parse(Buffer.concat(chunks).toString("utf8") || "null"),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

afterAll(async () => {
  await worker?.stop();
  await receiver.close();
  rmSync(persist, { recursive: true, force: true });
});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Creates a session and waits until it is plan_ready (polling as a terminal). */
async function planReady(): Promise<{ session: Session }> {
  const created = await api.createSession(auth, { prompt: PROMPT });
  const session = await until("plan_ready", async () => {
    await api.events(auth, created.id, { limit: 1 });
    const s = await api.getSession(auth, created.id);
    if (s.phase === "done") throw new Error(`session ${s.id} ended before plan_ready`);
    return s.phase === "plan_ready" ? s : undefined;
  });
  return { session };
}

describe("webhooks under wrangler dev", () => {
  it("every phase change and the outcome arrive once each, signed, with the session as it was then", async () => {
    receiver.state.mode = "accept";
    const { session } = await planReady();
    await api.decide(auth, session.id, {
      tool_use_id: session.pending?.tool_use_id ?? "",
      decision: "teleport",
    });
    const hits = await until("the outcome webhook", () => {
      const mine = receiver.forSession(session.id);
      return mine.some((h) => h.payload.type === "session.outcome") &&
        mine.some((h) => h.payload.session.phase === "done")
        ? mine
        : undefined;
    });
    // In the order the changes happened (ids sort so); arrival order is not guaranteed.
    hits.sort((a, b) => a.payload.id.localeCompare(b.payload.id));
    const seen = hits.map((h) => [h.payload.type, h.payload.session.phase]);
    expect(seen[0]).toEqual(["session.phase", "running"]);
    expect(seen).toContainEqual(["session.phase", "plan_ready"]);
    expect(seen).toContainEqual(["session.outcome", "done"]);
    expect(seen.at(-2)).toEqual(["session.phase", "done"]);
    // Each change once: consecutive phase events differ, and the ids are all distinct.
    const phases = hits
      .filter((h) => h.payload.type === "session.phase")
      .map((h) => h.payload.session.phase);
    phases.forEach((p, i) => {
      if (i > 0) expect(p).not.toBe(phases[i - 1]);
    });
    expect(new Set(hits.map((h) => h.payload.id)).size).toBe(hits.length);
    expect(hits.every((h) => h.signatureValid)).toBe(true);
    const outcome = hits.find((h) => h.payload.type === "session.outcome")?.payload;
    expect(outcome?.session.outcome).toMatchObject({ kind: "teleport" });
    expect(outcome?.session.review_url).toContain(`${worker.url}/review/${session.id}?key=`);
    expect(Number.isNaN(Date.parse(outcome?.created_at ?? ""))).toBe(false);
  }, 180_000);

  it("a receiver that fails the first attempt gets it again with the same id and bytes", async () => {
    receiver.state.mode = "fail-first";
    const { session } = await planReady();
    const retried = await until("a retried plan_ready delivery", () => {
      const mine = receiver
        .forSession(session.id)
        .filter((h) => h.payload.session.phase === "plan_ready");
      return mine.length >= 2 ? mine : undefined;
    });
    expect(retried[1]?.payload.id).toBe(retried[0]?.payload.id);
    expect(retried[1]?.body).toBe(retried[0]?.body);
    expect(retried.every((h) => h.signatureValid)).toBe(true);
    // Retry-After: 1 was honoured: the retry came no sooner (in fact after the 10 s backoff,
    // which a shorter Retry-After never cuts).
    expect((retried[1]?.at ?? 0) - (retried[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
    receiver.state.mode = "accept";
  }, 180_000);

  it("a receiver answering 503 with Retry-After: 0 is tried again no sooner than the backoff, and gets it in the end", async () => {
    receiver.state.mode = "unavailable-twice";
    const { session } = await planReady();
    const attempts = await until("a delivery attempted three times", () => {
      const byId = new Map<string, Hit[]>();
      for (const hit of receiver.forSession(session.id)) {
        byId.set(hit.payload.id, [...(byId.get(hit.payload.id) ?? []), hit]);
      }
      return [...byId.values()].find((hits) => hits.length >= 3);
    });
    receiver.state.mode = "accept";
    const [first, second, third] = attempts as [Hit, Hit, Hit];
    expect(new Set(attempts.map((h) => h.body)).size).toBe(1);
    expect(attempts.every((h) => h.signatureValid)).toBe(true);
    // Retry-After: 0 is not "at once": the waits are the backoff's, 10 s then 20 s (a loaded
    // machine only makes them longer; 0.5 s of slack for the two processes' clocks).
    expect(second.at - first.at).toBeGreaterThanOrEqual(9_500);
    expect(third.at - second.at).toBeGreaterThanOrEqual(19_500);
  }, 240_000);

  it("an approver's request with a forged Host never reaches the team's channel; the approver's links carry no decision key", async () => {
    receiver.state.mode = "accept";
    const created = await api.createSession(auth, { prompt: PROMPT, approvers: ["bob"] });
    const decisionKey = new URL(created.review_url).searchParams.get("key") ?? "";
    const ready = await until("plan_ready", async () => {
      const s = await api.getSession(auth, created.id);
      if (s.phase === "done") throw new Error(`session ${s.id} ended before plan_ready`);
      return s.phase === "plan_ready" ? s : undefined;
    });

    // The approver's own view and list: the share link, no decision key anywhere.
    const bobs = await api.getSession({ token: BOB_TOKEN }, created.id);
    expect(bobs.your_role).toBe("approver");
    expect(bobs.review_url).toBe(created.share_url);
    const awaiting = await (
      await api.call("GET", "/v1/sessions?awaiting=me", { token: BOB_TOKEN })
    ).json();
    expect(JSON.stringify([bobs, awaiting])).not.toContain(decisionKey);
    expect(JSON.stringify(awaiting)).toContain(created.id);

    // Now bob reads and keeps it planning on a forged Host; nobody else calls until the
    // planner's next plan_ready is announced (the engine's change, built with no request).
    const forged = await withHost("evil.example", "GET", `/v1/sessions/${created.id}`, BOB_TOKEN);
    expect(forged.status).toBe(200);
    expect(JSON.stringify(forged.json)).not.toContain(decisionKey);
    const kept = await withHost(
      "evil.example",
      "POST",
      `/v1/sessions/${created.id}/decision`,
      BOB_TOKEN,
      {
        tool_use_id: ready.pending?.tool_use_id,
        decision: "reject",
        feedback: "Also cover the readiness probe.",
      },
    );
    expect(kept.status, JSON.stringify(kept.json)).toBe(200);
    await until("the revised plan's plan_ready webhook", () =>
      receiver
        .forSession(created.id)
        .find(
          (h) => h.payload.session.phase === "plan_ready" && h.payload.session.reject_count === 1,
        ),
    );
    const links = receiver.forSession(created.id).map((h) => h.payload.session.review_url);
    expect(links.length).toBeGreaterThan(2);
    for (const link of links) {
      expect(link).toBe(
        `${worker.url}/review/${created.id}?key=${encodeURIComponent(decisionKey)}`,
      );
    }
  }, 180_000);

  it("a receiver that never answers does not stop the planning: sessions reach plan_ready while it holds their deliveries", async () => {
    // That a held attempt never holds the session's alarm is asserted by ordering, on the real
    // Durable Object, in test/worker/webhooks-delivery.test.ts ("the alarm ends while the
    // attempt is still open"); here, under wrangler dev, planning goes on to the end.
    receiver.state.mode = "hang";
    for (let i = 0; i < 3; i++) {
      const { session } = await planReady();
      expect(session.phase).toBe("plan_ready");
      // The receiver did get this session's deliveries (and is holding them open).
      expect(receiver.forSession(session.id).length).toBeGreaterThan(0);
    }
    receiver.state.mode = "accept";
  }, 240_000);

  it("a PLANPORT_WEBHOOK_URL that is not http(s) is refused: 500 server_misconfigured naming the var", async () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-e2e-webhooks-bad-"));
    const bad = await startWorkerProcess({
      persistDir: dir,
      vars: {
        PLANPORT_TOKENS: TOKEN,
        PLANPORT_PLANNER: "offline",
        PLANPORT_WEBHOOK_URL: "ftp://hooks.example.test/in",
        PLANPORT_WEBHOOK_SECRET: SECRET,
      },
    });
    try {
      const res = await fetch(`${bad.url}/v1/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ prompt: PROMPT }),
      });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status).toBe(500);
      expect(body.error.code).toBe("server_misconfigured");
      expect(body.error.message).toContain("PLANPORT_WEBHOOK_URL");
      expect(body.error.message).not.toContain(SECRET);
    } finally {
      await bad.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
