import type { Env } from "../env.ts";
import type { GroupClaim } from "../owner/group-choices.ts";
import { ownerIndexStub } from "../owner/stub.ts";
import type { Decision } from "../protocol/index.ts";
import { fail, ok } from "../protocol/index.ts";
import { archiveSession } from "./lifecycle.ts";
import type { SessionResult } from "./result.ts";
import type { GroupMember, SessionGroup } from "./rpc.ts";
import { hasEnded, type SessionRow } from "./session-row.ts";
import { sessionStub } from "./stub.ts";

/**
 * Best-of-N groups (CONTRACT "Extensions: Sessions"): sessions of one owner started together to
 * compare their plans. When one of them is approved or teleported, the others are archived —
 * their feeds end with `result/archived`, their outcome is `terminated/superseded`.
 *
 * **The arbiter** is the owner index (one Durable Object per owner, so every session of a group
 * reaches the same one, and it serialises them). Before a grouped session records an approval
 * or a teleport it *claims* the group there; the first claim wins, and a sibling's claim after it
 * is refused (409 `already_decided`), so two siblings approved at the same moment give one
 * chosen plan, never two executions. The claim is awaited *before* the decision's transaction,
 * never inside it (no Durable Object awaits another inside `transactionSync`).
 *
 * **After the decision commits** the session asks the arbiter to *settle*: confirm the claim and
 * archive every sibling (idempotent: a sibling that has ended already is left as it is). A
 * crash between the two is caught by the arbiter's own alarm, set when the claim was made: an
 * unconfirmed claim is checked with its session (did it record an approval or a teleport?) and
 * then confirmed and settled, or dropped (the decision never committed); a settlement whose
 * siblings could not all be reached is retried until done.
 */

/**
 * Archives the siblings of the chosen session, each idempotently; true when all are archived
 * (or had ended already). One that cannot be reached now is left for the next attempt.
 */
export async function supersedeSiblings(
  env: Env,
  siblings: readonly string[],
  chosen: string,
): Promise<boolean> {
  const results = await Promise.allSettled(
    siblings.map((id) => sessionStub(env, id).supersede(chosen)),
  );
  const failed = results.filter((r) => r.status === "rejected");
  for (const f of failed) {
    console.error("planport: superseding a sibling failed; the owner index retries", f.reason);
  }
  return failed.length === 0;
}

// ---------------------------------------------------------------------------------------------
// In the session's own Durable Object.

/** Whether this session recorded an approval or a teleport (the arbiter asks after a crash). */
export function hasChosenPlan(sql: SqlStorage): boolean {
  return (
    sql.exec("SELECT 1 FROM decisions WHERE decision IN ('approve', 'teleport') LIMIT 1").toArray()
      .length > 0
  );
}

/**
 * Archives a sibling of the chosen session, inside the caller's transaction: one
 * `result/archived` and the outcome `terminated/superseded`. A session that has ended already
 * (stopped, failed, or superseded before) keeps its ending: it happened first.
 */
export function supersedeSession(
  sql: SqlStorage,
  row: SessionRow,
  nowMs: number,
  retentionMs: number,
): void {
  if (hasEnded(row)) return;
  archiveSession(sql, row, nowMs, retentionMs, "superseded");
}

// ---------------------------------------------------------------------------------------------
// Across objects: what the session object and the review loader call.

/** Decisions that choose the plan (and so decide the whole group). */
function choosesPlan(decision: Decision["decision"]): boolean {
  return decision === "approve" || decision === "teleport";
}

/**
 * Claims the group before a decision that chooses this session's plan. Answers the claim
 * (`null` when the decision chooses nothing), or 409 `already_decided` when a sibling was
 * chosen first.
 */
export async function claimBeforeDecision(
  env: Env,
  row: SessionRow,
  decision: Decision["decision"],
): Promise<SessionResult<GroupClaim | null>> {
  if (!choosesPlan(decision)) return ok(null);
  // The row knows whether the session is in a group: an ungrouped one never asks the arbiter.
  if (row.group_name === null) return ok({ kind: "ungrouped" });
  const claim = await ownerIndexStub(env, row.owner).claimGroup(row.id);
  if (claim.kind !== "lost") return ok(claim);
  return fail(
    409,
    "already_decided",
    claim.confirmed
      ? `Another plan of group ${claim.group} (${claim.chosen}) was already chosen; this one is superseded.`
      : `Another plan of group ${claim.group} (${claim.chosen}) is being decided right now; reload to see which plan was chosen.`,
  );
}

/**
 * After the decision: settle the group (archive the siblings) when it committed, give the claim
 * back when it did not. Never fails the decision: the arbiter's alarm finishes whatever this
 * could not.
 */
export async function afterDecision(
  env: Env,
  row: SessionRow,
  claim: GroupClaim | null,
  committed: boolean,
): Promise<void> {
  if (claim?.kind !== "won") return;
  const index = ownerIndexStub(env, row.owner);
  try {
    if (committed) await index.settleGroup(row.id);
    else await index.releaseGroup(row.id);
  } catch (err) {
    console.error(`planport: settling group ${claim.group} failed; the owner index retries`, err);
  }
}

/**
 * The group of `sessionId` as its owner may see it, or null when it is in none. Every member is
 * read from its own object with the owner's access, so only sessions of this owner can appear
 * (the index is the owner's own), each with its current state and review link.
 */
export async function loadGroup(
  env: Env,
  owner: string,
  sessionId: string,
  origin: string,
): Promise<SessionGroup | null> {
  const found = await ownerIndexStub(env, owner).groupMembers(sessionId);
  if (found === null) return null;
  const access = { kind: "owner", owner } as const;
  const members = await Promise.all(
    found.ids.map(async (id): Promise<GroupMember | null> => {
      // Read for this page, not by a person visiting the sibling: it notes nobody there.
      const member = await sessionStub(env, id).groupMember(access, origin);
      return member.ok ? member.value : null;
    }),
  );
  return { name: found.group, members: members.filter((m): m is GroupMember => m !== null) };
}

/**
 * The review page's data for the holder of `key`: the session's own review state, and its
 * group when it has one. The group is loaded only after the key was accepted by the session.
 *
 * @example
 * app.route("/review", reviewRoutes<Env>((env) => ({ loadReview: (id, key) => reviewWithGroup(env, id, key) })));
 */
export async function reviewWithGroup(env: Env, sessionId: string, key: string) {
  const stub = sessionStub(env, sessionId);
  const access = { kind: "review", key } as const;
  const state = await stub.review(access);
  if (!state.ok) return state;
  let group: SessionGroup | null = null;
  try {
    const loaded = await stub.group(access, "");
    group = loaded.ok ? loaded.value : null;
  } catch (err) {
    // The page without its group is still the page: never fail a review over the siblings.
    console.error(`planport: loading the group of ${sessionId} failed`, err);
  }
  return ok({ ...state.value, group });
}
