import type { Decision, Message, Session, Suggestion } from "../protocol/index.ts";
import { fail, ok } from "../protocol/index.ts";
import { executionOf, refuseWithoutExecutor } from "./commands.ts";
import type { SessionCore } from "./core.ts";
import { postMessage } from "./decisions/messages.ts";
import { recordDecision } from "./decisions/record.ts";
import type { Allowed } from "./gate.ts";
import {
  type afterDecision,
  claimBeforeDecision,
  hasChosenPlan,
  supersedeSession,
} from "./groups.ts";
import { archiveSession } from "./lifecycle.ts";
import { canExecuteRemotely } from "./planners.ts";
import { NOT_FOUND, type SessionResult } from "./result.ts";
import { hasSchema } from "./schema.ts";
import { hasEnded, readRow } from "./session-row.ts";
import { MAX_SUGGESTIONS, refuseViewer, roleLabel } from "./team/rules.ts";
import { addSuggestion, listSuggestions, readTeam } from "./team/store.ts";

/**
 * The changes a person asks of a session, once the caller was let through (gate.ts): an answer
 * or a message, a decision, a stop, a suggestion; and the group arbiter's superseding. Each
 * writes in one transaction with the webhook events it makes, then sets the alarm and tells
 * the owner indexes what the change ended (core.ts).
 */

/** An answer to the open question, or free text (DESIGN.md "Messages"). */
export async function sendMessage(
  core: SessionCore,
  { row, role }: Allowed,
  body: Message,
  origin: string,
): Promise<SessionResult<Session>> {
  const viewOnly = refuseViewer(role);
  if (viewOnly) return viewOnly;
  const result = core.storage.transactionSync(() => {
    core.rememberOrigin(role, origin);
    return core.webhooks.announcing(postMessage(core.sql, row, body, core.now()));
  });
  if (!result.ok) return result;
  await core.scheduleAlarm();
  return core.view(origin, role);
}

/**
 * Decides the pending ExitPlanMode. No `await` from the check to the insert: concurrent
 * decisions serialise in the object, and all but the first get 409. In a best-of-N group an
 * approval or teleport first claims the group, and once it committed the siblings are
 * superseded (`settleGroup`, groups.ts), both outside the decision's transaction.
 */
export async function decide(
  core: SessionCore,
  { row: before, role }: Allowed,
  body: Decision,
  origin: string,
  settleGroup: typeof afterDecision,
): Promise<SessionResult<Session>> {
  const viewOnly = refuseViewer(role);
  if (viewOnly) return viewOnly;
  if (body.decision === "approve" && canExecuteRemotely(before.planner)) {
    // Before anything is recorded: without a container to run in, the approval starts nothing.
    const noExecutor = await refuseWithoutExecutor(executionOf(core.env, before));
    if (noExecutor) return noExecutor;
  }
  const team = readTeam(core.sql);
  const approvers = team?.approvers.map((a) => a.label) ?? [];
  const claim = await claimBeforeDecision(core.env, before, body.decision);
  if (!claim.ok) return claim;
  // Read again: other requests may have changed the session while the claim was made.
  const row = readRow(core.sql);
  if (row === null) return NOT_FOUND;
  const result = core.storage.transactionSync(() => {
    core.rememberOrigin(role, origin);
    return core.webhooks.announcing(
      recordDecision(core.sql, row, body, {
        nowMs: core.now(),
        terminalPolledAt: core.activity.applyTo(row).terminal_polled_at,
        retentionMs: core.retentionMs(),
        decider: role,
        approvers,
      }),
    );
  });
  if (result.ok) await core.scheduleAlarm();
  if (result.ok && result.value !== "reject") await core.dropAwaiting(team);
  if (result.ok) await core.releaseIfEnded(row);
  if (claim.value?.kind === "won") {
    // Durable before the arbiter hears of it: superseding the siblings of a decision that a
    // crash then lost would leave the group with no plan at all.
    await core.storage.sync();
    // A refusal gives the claim back, unless a concurrent request on this session chose the plan.
    await settleGroup(core.env, row, claim.value, result.ok || hasChosenPlan(core.sql));
  }
  return result.ok ? core.view(origin, role) : result;
}

/** Stops the session for good; idempotent (one `result/archived` event, ever). */
export async function archive(
  core: SessionCore,
  { row, role }: Allowed,
  origin: string,
): Promise<SessionResult<Session>> {
  const viewOnly = refuseViewer(role);
  if (viewOnly) return viewOnly;
  core.storage.transactionSync(() => {
    core.rememberOrigin(role, origin);
    archiveSession(core.sql, row, core.now(), core.retentionMs());
    core.webhooks.announce();
  });
  await core.scheduleAlarm();
  await core.dropAwaiting(readTeam(core.sql));
  await core.releaseIfEnded(row);
  return core.view(origin, role);
}

/**
 * A sibling of this session's group was chosen: archive this one as superseded (idempotent;
 * a session that has ended keeps its ending).
 */
export async function supersede(core: SessionCore, chosenId: string): Promise<void> {
  const row = hasSchema(core.sql) ? readRow(core.sql) : null;
  if (row === null || row.id === chosenId) return;
  core.storage.transactionSync(() => {
    supersedeSession(core.sql, row, core.now(), core.retentionMs());
    core.webhooks.announce();
  });
  await core.scheduleAlarm();
  await core.releaseIfEnded(row);
}

/**
 * Keeps a comment on the plan as a suggestion for whoever decides (team review): open to
 * everyone who may see the session, the share link included, until it ends.
 */
export function suggest(
  core: SessionCore,
  { row, role, identity }: Allowed,
  comment: { quote: string; text: string },
): SessionResult<Suggestion[]> {
  if (hasEnded(row)) {
    return fail(409, "session_ended", "This session has ended; its plan takes no more comments.");
  }
  const kept = core.storage.transactionSync(() =>
    addSuggestion(core.sql, comment, roleLabel(role), core.now()),
  );
  if (kept) core.activity.commentLeft(identity);
  if (!kept) {
    return fail(
      413,
      "payload_too_large",
      `This session already keeps ${MAX_SUGGESTIONS} suggestions; send yours to the person deciding another way.`,
    );
  }
  return ok(listSuggestions(core.sql));
}
