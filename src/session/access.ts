import { sameSecret } from "./ids.ts";
import type { Access } from "./result.ts";

/**
 * Who may see a session: its owner, and holders of its review key. Both never change once the
 * session exists, so the session object reads them once and checks every request against
 * them without touching storage (the hot path of a terminal's poll).
 */
export interface Identity {
  owner: string;
  reviewKey: string;
  /** terminal_polled_at as stored (the object updates it as it writes a newer one). */
  storedPollAt: number | null;
}

/** The identity of the session this object holds, or null when it holds none. */
export function readIdentity(sql: SqlStorage): Identity | null {
  const row = sql
    .exec<{ owner: string; review_key: string; terminal_polled_at: number | null }>(
      "SELECT owner, review_key, terminal_polled_at FROM session LIMIT 1",
    )
    .toArray()[0];
  return row === undefined
    ? null
    : { owner: row.owner, reviewKey: row.review_key, storedPollAt: row.terminal_polled_at };
}

/** Whether `access` may see the session (a review key compared in constant time). */
export function admits(identity: Identity, access: Access): boolean {
  return access.kind === "owner"
    ? access.owner === identity.owner
    : sameSecret(access.key, identity.reviewKey);
}
