import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { configOf } from "../config.ts";
import { createSession, listSessions } from "../owner/sessions.ts";
import {
  AnswerMessageSchema,
  CreateSessionSchema,
  DecisionSchema,
  FeedQuerySchema,
  ListSessionsQuerySchema,
  PlanQuerySchema,
  SESSION_ID_PATTERN,
  SuggestionBodySchema,
  TextMessageSchema,
} from "../protocol/index.ts";
import { NOT_FOUND } from "../session/result.ts";
import { sessionStub } from "../session/stub.ts";
import type { AppEnv } from "./app-env.ts";
import { knownOwners, requireOwner, requireSessionAccess } from "./auth.ts";
import { bodyLimit } from "./body-limits.ts";
import { sendError, sendFailure, sendResult } from "./errors.ts";
import { linkBase } from "./public-url.ts";
import { limitPerOwner } from "./rate-limit.ts";
import { readJson, readQuery } from "./validate.ts";

/**
 * The sessions API (docs/PROTOCOL.md "HTTP API"). Each route validates, calls one domain function or
 * one method of the session's Durable Object, and maps the answer to HTTP.
 */
export const sessionRoutes = new Hono<AppEnv>();

sessionRoutes.post("/v1/sessions", requireOwner, limitPerOwner("creates"), async (c) => {
  // A script (the scripted planner's turns) only where the server allows one.
  const limit = bodyLimit(configOf(c.env).allowScripted ? "scripted_session" : "session");
  const body = await readJson(c, CreateSessionSchema, limit);
  if (!body.ok) return sendError(c, body.error);
  const team = { label: c.get("label"), known: await knownOwners(c.env.PLANPORT_TOKENS) };
  return sendResult(
    c,
    await createSession(c.env, c.get("owner"), body.value, linkBase(c), { team }),
    201,
  );
});

sessionRoutes.get("/v1/sessions", requireOwner, async (c) => {
  const query = readQuery(c, ListSessionsQuerySchema);
  if (!query.ok) return sendError(c, query.error);
  if (query.value.awaiting !== undefined && query.value.group !== undefined) {
    return sendFailure(
      c,
      400,
      "invalid_query",
      "awaiting=me lists other owners' sessions, which are in none of your groups; leave out group.",
    );
  }
  return sendResult(c, await listSessions(c.env, c.get("owner"), query.value, linkBase(c)));
});

/**
 * Session-scoped routes: a bearer token or the review key; an id that cannot be a session id
 * is answered like an unknown session, without waking a Durable Object for it.
 */
const sessionScope = [
  requireSessionAccess,
  createMiddleware<AppEnv>(async (c, next) => {
    if (!SESSION_ID_PATTERN.test(c.req.param("id") ?? "")) return sendError(c, NOT_FOUND.error);
    await next();
  }),
] as const;

sessionRoutes.get("/v1/sessions/:id", ...sessionScope, async (c) => {
  const stub = sessionStub(c.env, c.req.param("id"));
  return sendResult(c, await stub.get(c.get("access"), linkBase(c)));
});

sessionRoutes.get("/v1/sessions/:id/events", ...sessionScope, async (c) => {
  const query = readQuery(c, FeedQuerySchema);
  if (!query.ok) return sendError(c, query.error);
  const stub = sessionStub(c.env, c.req.param("id"));
  return sendResult(
    c,
    await stub.events(c.get("access"), query.value.after_id ?? "", query.value.limit),
  );
});

sessionRoutes.get("/v1/sessions/:id/plan", ...sessionScope, async (c) => {
  const query = readQuery(c, PlanQuerySchema);
  if (!query.ok) return sendError(c, query.error);
  const stub = sessionStub(c.env, c.req.param("id"));
  return sendResult(c, await stub.plan(c.get("access"), query.value.revision));
});

sessionRoutes.get("/v1/sessions/:id/changes", ...sessionScope, async (c) => {
  const stub = sessionStub(c.env, c.req.param("id"));
  const diff = await stub.changes(c.get("access"));
  if (!diff.ok) return sendError(c, diff.error);
  return c.body(diff.value, 200, { "content-type": "text/x-diff; charset=utf-8" });
});

sessionRoutes.post("/v1/sessions/:id/messages", ...sessionScope, async (c) => {
  // Pick the shape by its keys, so an error names the field that is wrong.
  const body = await readJson(
    c,
    (json) =>
      typeof json === "object" && json !== null && "text" in json
        ? TextMessageSchema.strict()
        : AnswerMessageSchema.strict(),
    bodyLimit("message"),
  );
  if (!body.ok) return sendError(c, body.error);
  const stub = sessionStub(c.env, c.req.param("id"));
  return sendResult(c, await stub.message(c.get("access"), body.value, linkBase(c)), 202);
});

sessionRoutes.post("/v1/sessions/:id/decision", ...sessionScope, async (c) => {
  const body = await readJson(c, DecisionSchema, bodyLimit("decision"));
  if (!body.ok) return sendError(c, body.error);
  const stub = sessionStub(c.env, c.req.param("id"));
  return sendResult(c, await stub.decide(c.get("access"), body.value, linkBase(c)));
});

// Team review (docs/PROTOCOL.md "Team review"): comments kept as suggestions for the decider,
// open to the share link too.
sessionRoutes.get("/v1/sessions/:id/comments", ...sessionScope, async (c) => {
  const stub = sessionStub(c.env, c.req.param("id"));
  const list = await stub.suggestions(c.get("access"));
  return list.ok ? c.json({ data: list.value }) : sendError(c, list.error);
});

sessionRoutes.post("/v1/sessions/:id/comments", ...sessionScope, async (c) => {
  const body = await readJson(c, SuggestionBodySchema.strict(), bodyLimit("comment"));
  if (!body.ok) return sendError(c, body.error);
  const stub = sessionStub(c.env, c.req.param("id"));
  const list = await stub.suggest(c.get("access"), body.value);
  return list.ok ? c.json({ data: list.value }, 201) : sendError(c, list.error);
});

sessionRoutes.post("/v1/sessions/:id/archive", ...sessionScope, async (c) => {
  const stub = sessionStub(c.env, c.req.param("id"));
  return sendResult(c, await stub.archive(c.get("access"), linkBase(c)));
});
