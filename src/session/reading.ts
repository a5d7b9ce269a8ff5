import type { FeedPage, PlanFile, Session } from "../protocol/index.ts";
import { fail, ok } from "../protocol/index.ts";
import { listDecisions } from "./decisions/record.ts";
import { feedPage, listEvents } from "./events/log.ts";
import { listPlanRevisions, readPlan, readPlanRevision } from "./files/plan-file.ts";
import { eventSeq } from "./ids.ts";
import type { SessionResult } from "./result.ts";
import type { ReviewDetails, ReviewState, SessionGroup } from "./rpc.ts";
import type { SessionRow } from "./session-row.ts";
import type { Role } from "./team/rules.ts";
import { listSuggestions } from "./team/store.ts";

/**
 * What the session object's read methods answer, read from its SQLite once the caller was let
 * through (gate.ts): the feed, the plan, the review page's data. No access checks and no
 * writes here.
 */

/** A page of the event feed after the event `afterId` ("" for the start). */
export function feedAfter(
  sql: SqlStorage,
  afterId: string,
  limit: number,
): SessionResult<FeedPage> {
  const afterSeq = afterId === "" ? 0 : eventSeq(afterId);
  if (afterSeq === null) {
    return fail(
      400,
      "invalid_cursor",
      "after_id must be an event id such as evt_0000000000000042 (the last_id of a previous page).",
    );
  }
  return ok(feedPage(sql, afterSeq, limit));
}

/** Everything the review page shows: the session, the plan, the whole log and the decisions. */
export function reviewState(sql: SqlStorage, row: SessionRow, session: Session): ReviewState {
  return {
    session,
    plan: readPlan(sql, row.plan_path),
    events: listEvents(sql),
    decisions: listDecisions(sql),
    suggestions: listSuggestions(sql),
  };
}

/** The plan file (revision 0 and empty content before the planner wrote one). */
export function planOrEmpty(sql: SqlStorage, row: SessionRow): PlanFile {
  return (
    readPlan(sql, row.plan_path) ?? {
      path: row.plan_path,
      content: "",
      revision: 0,
      edited_by_user: false,
    }
  );
}

/** One stored revision of the plan file; 404 `revision_not_found` names the ones there are. */
export function planRevision(
  sql: SqlStorage,
  row: SessionRow,
  revision: number,
): SessionResult<PlanFile> {
  const plan = readPlanRevision(sql, row.plan_path, revision);
  if (plan !== null) return ok(plan);
  const latest = readPlan(sql, row.plan_path)?.revision ?? 0;
  return fail(
    404,
    "revision_not_found",
    latest === 0
      ? `The plan has no revision ${revision}: the planner has not written one yet.`
      : `The plan has no revision ${revision}: its revisions are 1 to ${latest}.`,
  );
}

/**
 * Every stored plan revision without its text, the text of the `wanted` ones (at most the two
 * the page shows or compares), and the session's deadlines (the ask timeout's answer, the purge).
 */
export function reviewDetails(
  sql: SqlStorage,
  row: SessionRow,
  wanted: readonly number[],
): ReviewDetails {
  const contents = [...new Set(wanted)]
    .slice(0, 2)
    .map((n) => readPlanRevision(sql, row.plan_path, n))
    .filter((p): p is PlanFile => p !== null);
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    revisions: listPlanRevisions(sql),
    contents,
    ask_timeout_s: row.ask_timeout_s,
    afk_due_at: iso(row.afk_due_at),
    purge_due_at: iso(row.purge_due_at),
  };
}

/** A group as `role` may see it: a share link leads only to share links (decision keys stay hidden). */
export function groupSeenBy(group: SessionGroup | null, role: Role): SessionGroup | null {
  if (group === null || role.kind !== "viewer") return group;
  return {
    ...group,
    members: group.members.map((m) => ({
      ...m,
      session: { ...m.session, review_url: m.session.share_url ?? "" },
    })),
  };
}
