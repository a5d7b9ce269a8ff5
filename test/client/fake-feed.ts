import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Session } from "../../src/protocol/index.ts";
import { healthzAnswer } from "../support/server-proof.ts";
import { FeedLog } from "./feed-events.ts";

/**
 * A test double of the planport worker's feed: a real node `http` server that answers the
 * routes the poller and the CLI read (`GET /v1/healthz`, `GET /v1/sessions`,
 * `GET /v1/sessions/:id`, `…/events`, `…/changes`, `POST …/archive`)
 * from a scripted {@link FeedLog}, and can be told to fail the next requests. It records every
 * request so tests can count them.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
}

/** A scripted answer that replaces the normal one for one request. */
export type Fault = { status: number; body?: string; contentType?: string } | { destroy: true };

export interface FakeFeed {
  readonly url: string;
  readonly log: FeedLog;
  readonly requests: RecordedRequest[];
  /** The session the double answers `GET /v1/sessions/:id` with (mutable). */
  session: Session;
  /** The body of `GET /v1/sessions/:id/changes`. */
  changes: string;
  /** Answers for the next events requests, in order, before the log is served again. */
  readonly eventFaults: Fault[];
  /** Called before each events request is answered (lets a test append events "live"). */
  onEventsRequest?: (count: number) => void;
  eventsRequests(): RecordedRequest[];
  close(): Promise<void>;
}

export const FAKE_TOKEN = "fake-token";
export const FAKE_SESSION_ID = "ses_01jxfake000000000000000000";

export function fakeSession(over: Partial<Session> = {}): Session {
  return {
    id: FAKE_SESSION_ID,
    title: "Add OAuth login",
    status: "running",
    phase: "running",
    permission_mode: "plan",
    planner: "offline",
    can_execute_remotely: false,
    reject_count: 0,
    outcome: null,
    review_url: `http://127.0.0.1/review/${FAKE_SESSION_ID}?key=k`,
    usage: { input_tokens: 0, output_tokens: 0 },
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    ...over,
  };
}

/** A session whose plan was approved and run in the cloud, by a planner that can execute. */
export function executedSession(over: Partial<Session> = {}): Session {
  return fakeSession({
    planner: "anthropic",
    can_execute_remotely: true,
    status: "idle",
    phase: "done",
    outcome: { kind: "approved", execution_target: "remote" },
    ...over,
  });
}

export async function startFakeFeed(): Promise<FakeFeed> {
  const requests: RecordedRequest[] = [];
  const log = new FeedLog();
  const eventFaults: Fault[] = [];
  let eventsCount = 0;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const rec: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
    };
    requests.push(rec);
    answer(req, res, rec);
  });

  const feed: FakeFeed = {
    url: "",
    log,
    requests,
    session: fakeSession(),
    changes: "",
    eventFaults,
    eventsRequests: () => requests.filter((r) => r.path.endsWith("/events")),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };

  function answer(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void {
    if (rec.path === "/v1/healthz") {
      void healthzAnswer(req, [FAKE_TOKEN]).then((body) => json(res, 200, body));
      return;
    }
    if (rec.authorization !== `Bearer ${FAKE_TOKEN}`) {
      json(res, 401, { error: { code: "unauthorized", message: "unknown token" } });
      return;
    }
    if (rec.path === "/v1/sessions" && rec.method === "GET") {
      json(res, 200, { data: [feed.session], has_more: false });
      return;
    }
    const m = /^\/v1\/sessions\/([^/]+)(\/events|\/archive|\/changes)?$/.exec(rec.path);
    if (!m || m[1] !== feed.session.id) {
      json(res, 404, { error: { code: "not_found", message: "no such session" } });
      return;
    }
    if (m[2] === "/events") {
      eventsCount += 1;
      feed.onEventsRequest?.(eventsCount);
      const fault = eventFaults.shift();
      if (fault && "destroy" in fault) {
        req.socket.destroy();
        return;
      }
      if (fault) {
        res.writeHead(fault.status, { "content-type": fault.contentType ?? "application/json" });
        res.end(fault.body ?? JSON.stringify({ error: { code: "boom", message: "scripted" } }));
        return;
      }
      const limit = Number(rec.query.get("limit") ?? "100");
      json(res, 200, log.page(rec.query.get("after_id"), limit));
      return;
    }
    if (m[2] === "/changes") {
      res.writeHead(200, { "content-type": "text/x-diff" });
      res.end(feed.changes);
      return;
    }
    if (m[2] === "/archive" && rec.method === "POST") {
      feed.session = { ...feed.session, status: "archived", phase: "done" };
      json(res, 200, feed.session);
      return;
    }
    json(res, 200, feed.session);
  }

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return Object.assign(feed, { url: `http://127.0.0.1:${address.port}` });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** A clock for the poller that never really waits: sleeping moves time forward. */
export function fakeClock() {
  const clock = {
    t: 0,
    sleeps: [] as number[],
    now: () => clock.t,
    async sleep(ms: number, signal?: AbortSignal) {
      if (signal?.aborted) throw signal.reason;
      clock.sleeps.push(ms);
      clock.t += ms;
      await Promise.resolve();
    },
  };
  return clock;
}
