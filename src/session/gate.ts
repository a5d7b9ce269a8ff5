import type { Activity } from "./activity.ts";
import type { Access } from "./result.ts";
import { hasSchema } from "./schema.ts";
import { readRow, type SessionRow } from "./session-row.ts";
import { type Identity, readIdentity, roleOf } from "./team/access.ts";
import type { Role } from "./team/rules.ts";

/** A request the session object let through: the row, the caller's role, the identity. */
export interface Allowed {
  row: SessionRow;
  role: Role;
  identity: Identity;
}

/**
 * The session object's access check, made at the top of every RPC method: who the caller is to
 * this session (team/access.ts `roleOf`), or null for a 404. The identity never changes once
 * the session exists, so it is read from storage once and kept; a terminal's poll is checked
 * without touching storage.
 *
 * @example
 * const allowed = gate.visit(access);
 * if (allowed === null) return NOT_FOUND;
 */
export class AccessGate {
  /** Who may see the session (never changes once created); undefined until first read. */
  private identity: Identity | null | undefined;

  constructor(
    private readonly sql: SqlStorage,
    private readonly activity: Activity,
  ) {}

  /**
   * The caller's role and the identity, without reading the row: the hot path of every
   * terminal poll. Notes nobody.
   */
  roleOf(access: Access): { identity: Identity; role: Role } | null {
    const identity = this.loadIdentity();
    const role = identity === null ? null : roleOf(identity, access);
    return identity === null || role === null ? null : { identity, role };
  }

  /**
   * How `access` may act on the session, with the row; null answers 404. Notes nobody: for
   * reads made on someone else's behalf (a list, a sibling's review page). A person's own
   * request goes through {@link visit}.
   */
  allowed(access: Access): Allowed | null {
    const found = this.roleOf(access);
    const row = found === null ? null : readRow(this.sql);
    return row === null || found === null ? null : { row, ...found };
  }

  /** {@link allowed}, for a request about this session itself: notes who came (activity.ts). */
  visit(access: Access): Allowed | null {
    const allowed = this.allowed(access);
    if (allowed !== null) this.activity.personSeen(allowed.identity, allowed.role);
    return allowed;
  }

  /** The session was created or deleted: read the identity again at the next request. */
  forget(): void {
    this.identity = undefined;
  }

  private loadIdentity(): Identity | null {
    if (this.identity === undefined)
      this.identity = hasSchema(this.sql) ? readIdentity(this.sql) : null;
    return this.identity;
  }
}
