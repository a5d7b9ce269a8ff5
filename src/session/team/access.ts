import { bareTokenLabel } from "../../config/tokens.ts";
import { sameSecret } from "../ids.ts";
import type { Access } from "../result.ts";
import type { Approver, Role } from "./rules.ts";
import { readTeam } from "./store.ts";

/**
 * Who may see a session: its owner, the approvers it names (their own bearer tokens), and
 * holders of its decision key or its view key. None of it changes once the session exists, so
 * the session object reads it once and checks every request against it without touching
 * storage (the hot path of a terminal's poll).
 */
export interface Identity {
  owner: string;
  reviewKey: string;
  viewKey: string;
  approvers: readonly Approver[];
  requesterLabel: string | null;
  /** terminal_polled_at as stored (the object updates it as it writes a newer one). */
  storedPollAt: number | null;
  /** person_seen_at as stored (likewise). */
  storedSeenAt: number | null;
}

/** The identity of the session this object holds, or null when it holds none. */
export function readIdentity(sql: SqlStorage): Identity | null {
  const row = sql
    .exec<{
      owner: string;
      review_key: string;
      terminal_polled_at: number | null;
      person_seen_at: number | null;
    }>("SELECT owner, review_key, terminal_polled_at, person_seen_at FROM session LIMIT 1")
    .toArray()[0];
  const team = readTeam(sql);
  return row === undefined || team === null
    ? null
    : {
        owner: row.owner,
        reviewKey: row.review_key,
        viewKey: team.viewKey,
        approvers: team.approvers,
        requesterLabel: team.requesterLabel,
        storedPollAt: row.terminal_polled_at,
        storedSeenAt: row.person_seen_at,
      };
}

/**
 * How `access` may act on the session, or null when it may not see it (404). A presented key
 * is compared with both keys in constant time, both comparisons always made, so neither the
 * answer's time nor its kind tells which key came closer; the two keys are drawn separately
 * and never stand in for each other.
 */
export function roleOf(identity: Identity, access: Access): Role | null {
  if (access.kind === "owner") {
    if (access.owner === identity.owner) {
      return {
        kind: "requester",
        label: access.label ?? identity.requesterLabel ?? bareTokenLabel(identity.owner),
      };
    }
    const approver = identity.approvers.find((a) => a.owner === access.owner);
    return approver === undefined ? null : { kind: "approver", label: approver.label };
  }
  const decides = sameSecret(access.key, identity.reviewKey);
  // An empty key never matches (a session's view key is empty only mid-migration).
  const views = sameSecret(access.key, identity.viewKey) && identity.viewKey !== "";
  if (decides) return { kind: "decider" };
  if (views) return { kind: "viewer" };
  return null;
}
