import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { resolve } from "node:path";
import { Hono } from "hono";
import {
  type DecisionKind,
  type Event,
  MAX_APPROVABLE_PLAN_CHARS,
  type NewEvent,
  type PlanFile,
  type Session,
  TERMINAL_POLL_WINDOW_MS,
} from "../../src/protocol/index.ts";
import { reviewRoutes } from "../../src/review/route.ts";
import { NOT_FOUND } from "../../src/session/result.ts";
import { fixtureEvent } from "../worker/review-fixtures.ts";

/** The worker's static assets (wrangler.toml `[assets]`; filled by `npm ci`'s postinstall). */
const ASSETS_DIR = resolve(import.meta.dirname, "..", "..", "public");

/**
 * A TEST DOUBLE of the session API, for driving the real review page and its real script in
 * Chromium before (and independently of) the session Durable Object and the planning engine.
 * It keeps one session in memory, answers the public JSON routes the page uses with the
 * CONTRACT shapes, records every request body, and serves `/review/:id` through the real
 * `reviewRoutes`. Tests play the planner by changing `session`, `plan`, `events` and `changes`.
 *
 * It is not the product: the decisions it takes are the minimum the page needs to see a
 * believable answer. The real routes are tested in test/worker and end to end.
 */
export class FakeSessionApi {
  session: Session;
  plan: PlanFile | null;
  events: Event[];
  /** The unified diff `GET /changes` answers. */
  changes = "";
  /** Bodies the page posted, in order, with their route. */
  readonly received: { route: string; body: unknown }[] = [];
  /** When set, the next POST answers with this error instead. */
  failNext: { status: number; code: string; message: string } | null = null;
  readonly key: string;
  /**
   * Other sessions of this session's best-of-N group (their review pages are served too, read
   * only); the group is named {@link groupName}. None: the session is in no group.
   */
  siblings: { session: Session; plan: PlanFile | null; key: string }[] = [];
  groupName = "bo3-fake";

  private server: Server | null = null;
  origin = "";

  constructor(init: { session: Session; plan: PlanFile | null; events: Event[]; key: string }) {
    this.session = init.session;
    this.plan = init.plan;
    this.events = init.events;
    this.key = init.key;
  }

  get reviewUrl(): string {
    return `${this.origin}/review/${this.session.id}?key=${encodeURIComponent(this.key)}`;
  }

  /** Marks a terminal as polling right now (what a bearer-token events poll does). */
  terminalPolls(): void {
    this.session = { ...this.session, terminal_polled_at: new Date().toISOString() };
  }

  append(...bodies: NewEvent[]): void {
    this.events.push(...bodies.map((b) => fixtureEvent(b)));
    this.touch({});
  }

  touch(changes: Partial<Session>): void {
    this.session = { ...this.session, ...changes, updated_at: new Date().toISOString() };
  }

  async start(): Promise<void> {
    const app = this.app();
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
      }
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const response = await app.fetch(
        new Request(`${this.origin}${req.url}`, {
          method: req.method,
          headers,
          body: hasBody ? Buffer.concat(chunks) : undefined,
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    this.origin = `http://127.0.0.1:${address.port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, "close");
  }

  private app(): Hono {
    const app = new Hono();
    // As wrangler serves `[assets]`: mermaid's bundle for the diagram frames.
    app.get("/review/vendor/mermaid.min.js", async () => {
      const script = await readFile(resolve(ASSETS_DIR, "review/vendor/mermaid.min.js"));
      return new Response(script, { headers: { "Content-Type": "text/javascript" } });
    });
    app.route(
      "/review",
      reviewRoutes(() => ({
        loadReview: async (id, key) => {
          const group = this.group();
          if (id === this.session.id && key === this.key) {
            return {
              ok: true,
              value: { session: this.session, plan: this.plan, events: [...this.events], group },
            };
          }
          const sibling = this.siblings.find((s) => s.session.id === id && s.key === key);
          return sibling
            ? {
                ok: true,
                value: { session: sibling.session, plan: sibling.plan, events: [], group },
              }
            : notFound();
        },
      })),
    );
    const api = new Hono();
    api.use("*", async (c, next) => {
      if (c.req.header("X-Review-Key") !== this.key || c.req.param("id") !== this.session.id) {
        return c.json(NOT_FOUND_BODY, 404);
      }
      await next();
    });
    api.get("/", (c) => c.json(this.session));
    api.get("/events", (c) => {
      const after = c.req.query("after_id") ?? "";
      const limit = Number(c.req.query("limit") ?? 100);
      const newer = this.events.filter((e) => e.id > after);
      const data = newer.slice(0, limit);
      return c.json({
        data,
        has_more: newer.length > data.length,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      });
    });
    api.get("/plan", (c) => (this.plan ? c.json(this.plan) : c.json(NOT_FOUND_BODY, 404)));
    api.get("/changes", (c) => c.body(this.changes, 200, { "Content-Type": "text/x-diff" }));
    api.post("/messages", async (c) =>
      this.post(c.req.path, await c.req.json(), (b) => this.message(b)),
    );
    api.post("/decision", async (c) =>
      this.post(c.req.path, await c.req.json(), (b) => this.decide(b)),
    );
    api.post("/archive", async (c) => this.post(c.req.path, {}, () => this.archive()));
    app.route("/v1/sessions/:id", api);
    return app;
  }

  /** The group as the real loader gives it: every member, oldest first. */
  private group() {
    if (this.siblings.length === 0) return null;
    const members = [{ session: this.session, plan: this.plan }, ...this.siblings];
    return { name: this.groupName, members };
  }

  private post(
    route: string,
    body: unknown,
    act: (body: Record<string, unknown>) => Answer,
  ): Response {
    this.received.push({ route, body });
    const failure = this.failNext;
    this.failNext = null;
    const answer = failure
      ? error(failure.status, failure.code, failure.message)
      : act(body as Record<string, unknown>);
    return Response.json(answer.body, { status: answer.status });
  }

  private message(body: Record<string, unknown>): Answer {
    const pending = this.session.pending;
    if (typeof body.tool_use_id === "string") {
      if (pending?.kind !== "question" || pending.tool_use_id !== body.tool_use_id) {
        return error(400, "unknown_question", "That question is not open.");
      }
      this.append({
        type: "user",
        message: {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: body.tool_use_id,
              content: `User has answered your questions: ${JSON.stringify(body.answers)}. You can now continue with the user's answers in mind.`,
            },
          ],
        },
        answers: {
          tool_use_id: body.tool_use_id,
          answers: body.answers as Record<string, string>,
          by: "user",
        },
      });
      this.touch({ status: "running", phase: "running", pending: null });
      return { status: 202, body: { accepted: true } };
    }
    this.append({ type: "user", message: { role: "user", content: String(body.text) } });
    this.touch({ status: "running", phase: "running" });
    return { status: 202, body: { accepted: true } };
  }

  private decide(body: Record<string, unknown>): Answer {
    const pending = this.session.pending;
    if (pending?.kind !== "plan" || pending.tool_use_id !== body.tool_use_id) {
      return error(409, "not_pending", "This plan is not waiting for a decision.");
    }
    const plan = typeof body.plan === "string" ? body.plan : (this.plan?.content ?? "");
    // As the server writes it: the prose, and the verdict as data.
    const result = (content: string, isError: boolean, kind: DecisionKind) =>
      this.append({
        type: "user",
        message: {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: pending.tool_use_id, content, is_error: isError },
          ],
        },
        decision: { tool_use_id: pending.tool_use_id, kind },
      });
    switch (body.decision) {
      case "reject": {
        const comments = Array.isArray(body.comments) ? body.comments : [];
        if (!body.feedback && comments.length === 0) {
          return error(
            400,
            "feedback_required",
            "Say what should change: write feedback or add a comment.",
          );
        }
        result(
          `Keep planning.\n\nFeedback from the user:\n${String(body.feedback ?? "")}`,
          true,
          "reject",
        );
        this.touch({
          status: "running",
          phase: "running",
          pending: null,
          reject_count: this.session.reject_count + 1,
        });
        break;
      }
      case "approve":
        if (!this.session.can_execute_remotely) {
          return error(
            409,
            "cannot_execute_remotely",
            "This planner cannot execute plans in the cloud.",
          );
        }
        if (plan.length > MAX_APPROVABLE_PLAN_CHARS)
          return error(409, "plan_too_large", "The plan is too large.");
        result(`Approved.\n\n## Approved Plan:\n${plan}`, false, "approve");
        this.touch({
          status: "running",
          phase: "executing",
          pending: null,
          permission_mode: "default",
          outcome: { kind: "approved", execution_target: "remote" },
        });
        break;
      case "teleport": {
        const polled = Date.parse(this.session.terminal_polled_at ?? "");
        if (!(Date.now() - polled <= TERMINAL_POLL_WINDOW_MS)) {
          return error(409, "no_terminal", "No terminal is polling this session.");
        }
        result(`Stop now.\n\n__ULTRAPLAN_TELEPORT_LOCAL__\n${plan}`, true, "teleport");
        this.append({ type: "result", subtype: "archived", is_error: false, num_turns: 1 });
        this.touch({
          status: "archived",
          phase: "done",
          pending: null,
          outcome: { kind: "teleport", execution_target: "local" },
        });
        break;
      }
      default:
        return error(400, "invalid_body", "decision must be approve, reject or teleport");
    }
    return { status: 200, body: this.session };
  }

  private archive(): Answer {
    if (this.session.status !== "archived") {
      this.append({ type: "result", subtype: "archived", is_error: false, num_turns: 1 });
      this.touch({ status: "archived", phase: "done", pending: null });
    }
    return { status: 200, body: this.session };
  }
}

interface Answer {
  status: number;
  body: unknown;
}

function error(status: number, code: string, message: string): Answer {
  return { status, body: { error: { code, message } } };
}

/** The session object's one answer for an unknown session or a wrong key. */
const notFound = () => NOT_FOUND;
const NOT_FOUND_BODY = { error: { code: NOT_FOUND.error.code, message: NOT_FOUND.error.message } };
