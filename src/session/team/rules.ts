import {
  type DecisionKind,
  fail,
  REVIEW_LINK,
  type Refusal,
  type SessionRole,
  SHARE_LINK,
} from "../../protocol/index.ts";

/**
 * Team review (docs/PROTOCOL.md "Team review", DESIGN.md "Team review"): the session's view
 * key beside its decision key, the owners whose approval its plan needs, and the suggestions
 * readers left. The rules are pure functions of a caller's {@link Role}; the storage helpers
 * run inside the session object's transactions.
 */

/** An owner whose approval a plan needs: its id (a hash) and the label users see. */
export interface Approver {
  owner: string;
  label: string;
}

/** What a session keeps for team review besides its row (schema version 5). */
export interface TeamRecord {
  viewKey: string;
  approvers: Approver[];
  /** The requester's label at creation (null on sessions stored before labels). */
  requesterLabel: string | null;
}

/**
 * How a caller may act on the session: its requester (the owner's bearer token), a listed
 * approver (their own bearer token), a holder of the decision key (the review link) or of the
 * view key (the share link).
 */
export type Role =
  | { kind: "requester"; label: string }
  | { kind: "approver"; label: string }
  | { kind: "decider" }
  | { kind: "viewer" };

/** The most suggestions one session keeps; later ones are refused (409 `payload_too_large`). */
export const MAX_SUGGESTIONS = 200;

/** The wire name of a role (the Session's `your_role`). */
export function roleName(role: Role): SessionRole {
  return role.kind;
}

/** Who a role is in `decided_by` and in a suggestion's `from`. */
export function roleLabel(role: Role): string {
  switch (role.kind) {
    case "requester":
    case "approver":
      return role.label;
    case "decider":
      return REVIEW_LINK;
    case "viewer":
      return SHARE_LINK;
  }
}

/**
 * Deciding routes (decision, messages, answers, archive) refuse the share link.
 *
 * @example refuseViewer({ kind: "viewer" }) // { ok: false, error: { status: 403, code: "view_only", … } }
 */
export function refuseViewer(role: Role): Refusal | null {
  return role.kind === "viewer"
    ? fail(
        403,
        "view_only",
        "This is a read-only share link: it shows the plan and takes comments (POST /v1/sessions/:id/comments), but cannot decide, answer, message or stop. Ask the session's owner for the review link.",
      )
    : null;
}

/**
 * Who may approve or teleport when the session names approvers: only a listed approver (their
 * own bearer token), never the requester's token nor the decision key. Keeping the session
 * planning (reject) stays open to everyone who may decide, the requester above all.
 *
 * @example
 * approvalRefusal({ kind: "requester", label: "alice" }, "approve", ["bob"], "ses_…")
 * // 409 approval_required: "… needs the approval of bob …"
 */
export function approvalRefusal(
  role: Role,
  decision: DecisionKind,
  approvers: readonly string[],
  sessionId: string,
): Refusal | null {
  if (approvers.length === 0 || decision === "reject" || role.kind === "approver") return null;
  const who = listOf(approvers);
  const yours =
    role.kind === "requester"
      ? "your own token cannot approve your plan"
      : "the review link cannot approve it";
  return fail(
    409,
    "approval_required",
    `This plan needs the approval of ${who}: only ${approvers.length === 1 ? "their" : "one of their"} own bearer tokens can approve it or send it to a terminal (planport review ${sessionId}), and ${yours}. Keeping the session planning with feedback is still open.`,
  );
}

function listOf(labels: readonly string[]): string {
  if (labels.length <= 1) return labels.join("");
  return `${labels.slice(0, -1).join(", ")} or ${labels.at(-1)}`;
}

/**
 * The approvers of a new session from what was asked and the team rule: the labels named in
 * `approvers` (each a known owner other than the requester), or with the rule `other-owner`
 * and none named, every other known owner. 400 `unknown_approver` names a label no token has.
 */
export function resolveApprovers(
  asked: readonly string[] | undefined,
  rule: "none" | "other-owner",
  requester: string,
  known: readonly Approver[],
): { ok: true; value: Approver[] } | Refusal {
  if (asked === undefined) {
    return {
      ok: true,
      value: rule === "other-owner" ? known.filter((o) => o.owner !== requester) : [],
    };
  }
  const approvers: Approver[] = [];
  for (const label of asked) {
    const found = known.find((o) => o.label === label);
    if (found === undefined) {
      return fail(
        400,
        "unknown_approver",
        `approvers: no owner is labelled ${JSON.stringify(label)}; the server knows ${listAll(known)}.`,
      );
    }
    if (found.owner === requester) {
      return fail(
        400,
        "invalid_body",
        `approvers: ${label} is you, and a requester never approves their own plan; name someone else.`,
      );
    }
    if (!approvers.some((a) => a.owner === found.owner)) approvers.push(found);
  }
  return { ok: true, value: approvers };
}

function listAll(known: readonly Approver[]): string {
  return known.length === 0 ? "no labels" : known.map((o) => o.label).join(", ");
}
