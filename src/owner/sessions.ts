import { configOf } from "../config.ts";
import type { Env } from "../env.ts";
import type { CreateSession, Session, SessionList } from "../protocol/index.ts";
import { fail, ok } from "../protocol/index.ts";
import { newReviewKey, newSessionId } from "../session/ids.ts";
import { checkVariant, resolvePlanner } from "../session/planners.ts";
import type { SessionResult } from "../session/result.ts";
import { MAX_STORED_JSON_CHARS } from "../session/schema.ts";
import { sessionStub } from "../session/stub.ts";
import { type Approver, resolveApprovers } from "../session/team/rules.ts";
import { ownerIndexStub } from "./stub.ts";

/**
 * The owner-level operations that span Durable Objects: creating a session (owner index +
 * session object) and listing an owner's sessions. Routes call these; everything scoped to one
 * session is an RPC method of its {@link import("../session/rpc.ts").SessionRpc}.
 */

const TITLE_MAX_CHARS = 80;

export interface CreateOptions {
  /** false: create without scheduling the loop (tests drive the session through its port). */
  autostart?: boolean;
  /**
   * The requester's label and every owner the server knows (the route reads them from
   * PLANPORT_TOKENS); without them no approvers can be named.
   */
  team?: { label: string; known: readonly Approver[] };
}

/**
 * Creates a session for `owner`: resolves the planner, checks the snapshot belongs to the
 * owner, registers the session in the owner index (which counts the snapshot as in use), then
 * creates the session object.
 *
 * @example
 * const created = await createSession(env, owner, { prompt: "Add OAuth login" }, "https://pp.example");
 * if (created.ok) console.log(created.value.review_url);
 */
export async function createSession(
  env: Env,
  owner: string,
  body: CreateSession,
  origin: string,
  opts: CreateOptions = {},
): Promise<SessionResult<Session>> {
  const config = configOf(env);
  const planner = resolvePlanner(body.planner, {
    ...env,
    configured: config.planner,
    allowScripted: config.allowScripted,
  });
  if (!planner.ok) return planner;
  const variant = checkVariant(planner.value, body.variant ?? "simple");
  if (!variant.ok) return variant;
  if (planner.value === "scripted" && (body.script === undefined || body.script.length === 0)) {
    return fail(
      400,
      "invalid_body",
      "script: the scripted planner needs a non-empty list of model turns.",
    );
  }
  if (planner.value !== "scripted" && body.script !== undefined) {
    return fail(
      400,
      "invalid_body",
      `script: only the scripted planner takes a script, not ${planner.value}.`,
    );
  }
  // The script is stored in one SQLite value.
  if (body.script !== undefined && JSON.stringify(body.script).length > MAX_STORED_JSON_CHARS) {
    return fail(
      413,
      "payload_too_large",
      `script: over ${MAX_STORED_JSON_CHARS} characters of JSON; split the replay into shorter sessions.`,
    );
  }

  const approvers = resolveApprovers(
    body.approvers,
    config.requireApproval,
    owner,
    opts.team?.known ?? [],
  );
  if (!approvers.ok) return approvers;

  const now = Date.now();
  const id = newSessionId(now);
  const index = ownerIndexStub(env, owner);
  const snapshotId = body.snapshot_id ?? null;
  // Registered in the same transaction that checks the snapshot: from here on retention will
  // not delete it under us.
  const refused = await index.add(id, snapshotId, now, body.group ?? null, owner);
  if (refused !== null && "chosen" in refused) {
    return fail(
      409,
      "already_decided",
      `Group ${body.group} already chose the plan of ${refused.chosen}; start a new group to compare again.`,
    );
  }
  if (refused !== null) {
    return fail(
      400,
      "unknown_snapshot",
      `You have not uploaded snapshot ${snapshotId} (or it was deleted after the retention period); upload it again first.`,
    );
  }
  // Before the session exists, like the owner's own row: a row whose session never came to be
  // is dropped by the approver's next listing (owner-index.ts `listAwaiting`).
  await Promise.all(
    approvers.value.map((a) => ownerIndexStub(env, a.owner).addAwaiting(id, owner, now)),
  );
  const created = await sessionStub(env, id).create({
    id,
    owner,
    reviewKey: newReviewKey(),
    prompt: body.prompt,
    title: body.title ?? titleFrom(body.prompt),
    planner: planner.value,
    variant: variant.value,
    group: body.group ?? null,
    prePlanMode:
      body.permission_mode && body.permission_mode !== "plan" ? body.permission_mode : "default",
    askTimeoutS: body.ask_timeout_s ?? null,
    instructions: body.instructions ?? null,
    script: body.script ?? null,
    seedPlan: body.seed_plan ?? null,
    snapshotId,
    maxTurns: config.maxTurns,
    origin,
    autostart: opts.autostart ?? true,
    team: {
      viewKey: newReviewKey(),
      approvers: approvers.value,
      requesterLabel: opts.team?.label ?? null,
    },
  });
  if (!created.ok) await index.remove(id);
  return created;
}

/**
 * The owner's sessions, newest first, `limit` per page, older than `before` when given; only
 * those of the best-of-N `group` when given (an indexed read of the group). Each session's
 * state is read from its own object, so the list is never stale.
 */
export async function listSessions(
  env: Env,
  owner: string,
  query: { limit: number; before?: string; group?: string; awaiting?: "me" },
  origin: string,
): Promise<SessionResult<SessionList>> {
  if (query.awaiting === "me") return listAwaiting(env, owner, query, origin);
  const index = ownerIndexStub(env, owner);
  const page =
    query.group === undefined
      ? await index.list(query.limit, query.before)
      : await index.listGroup(query.group, query.limit, query.before);
  const access = { kind: "owner", owner } as const;
  // Listed, not visited: a list is nobody looking at these sessions (session-object.ts `listed`).
  const sessions = await Promise.all(
    page.ids.map((id) => sessionStub(env, id).listed(access, origin)),
  );
  // A session purged between the two reads is simply gone.
  const data = sessions.flatMap((s) => (s.ok ? [s.value] : []));
  return ok({ data, has_more: page.hasMore });
}

/**
 * The sessions waiting for `approver`'s approval, newest first (DESIGN.md "Team review"): the
 * candidates of the approver's owner index, each read from its own object with the approver's
 * access, keeping those not yet approved or teleported and not ended. A candidate that no
 * longer waits (decided, ended, purged, never created) is dropped from the index as it is
 * seen, so the index needs no hook in every way a session can end.
 */
async function listAwaiting(
  env: Env,
  approver: string,
  query: { limit: number; before?: string },
  origin: string,
): Promise<SessionResult<SessionList>> {
  const index = ownerIndexStub(env, approver);
  const access = { kind: "owner", owner: approver } as const;
  const data: Session[] = [];
  let before = query.before;
  for (;;) {
    const page = await index.listAwaiting(query.limit, before);
    const read = await Promise.all(
      page.ids.map((id) => sessionStub(env, id).listed(access, origin)),
    );
    const gone: string[] = [];
    read.forEach((s, i) => {
      if (s.ok && awaitsApproval(s.value)) data.push(s.value);
      else gone.push(page.ids[i] as string);
    });
    if (gone.length > 0) await index.dropAwaiting(gone);
    if (data.length >= query.limit || !page.hasMore) {
      return ok({
        data: data.slice(0, query.limit),
        has_more: page.hasMore || data.length > query.limit,
      });
    }
    before = page.ids.at(-1);
  }
}

/** Still waiting for an approver: no plan chosen, not ended. */
function awaitsApproval(session: Session): boolean {
  return session.outcome === null && session.status !== "archived" && session.phase !== "done";
}

function titleFrom(prompt: string): string {
  const firstLine = prompt.trim().split("\n")[0]?.trim() ?? "";
  return firstLine.length <= TITLE_MAX_CHARS
    ? firstLine
    : `${firstLine.slice(0, TITLE_MAX_CHARS - 1)}…`;
}
