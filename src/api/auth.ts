import type { MiddlewareHandler } from "hono";
import { bareTokenLabel, configOf } from "../config.ts";
import type { Env } from "../env.ts";
import type { Access } from "../session/result.ts";
import { sendFailure } from "./errors.ts";
import { clientAddress, overLimit } from "./rate-limit.ts";

/**
 * Authentication (DESIGN.md "Auth and access"). A bearer token is matched against every
 * configured token by comparing sha256 digests in constant time, with no early exit; the owner
 * is a hash of the token, never the token. Session-scoped routes also accept the session's
 * review key (`X-Review-Key`), which the session object checks itself.
 */

/**
 * `access` is set on every authenticated route; `owner` and its `label` only where a bearer
 * token is required.
 */
export type AppEnv = {
  Bindings: Env;
  Variables: { access: Access; owner: string; label: string };
};

const OWNER_HASH_PREFIX = "planport:owner:";
const OWNER_ID_HEX_CHARS = 32;

const encoder = new TextEncoder();

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The owner id of a token: hex sha256 of `planport:owner:` + token, first 32 characters.
 *
 * @example await ownerIdOf("secret1") // "3f5c…" (32 hex characters)
 */
export async function ownerIdOf(token: string): Promise<string> {
  return hex(await sha256(OWNER_HASH_PREFIX + token)).slice(0, OWNER_ID_HEX_CHARS);
}

/** An owner the server knows: its id (a hash) and the label users type and see. */
export interface KnownOwner {
  owner: string;
  label: string;
}

interface ConfiguredOwner extends KnownOwner {
  digest: Uint8Array;
}

/**
 * Digests, owner ids and labels of the configured tokens, computed once per distinct
 * configuration (every authenticated request, polls above all, then costs one digest).
 */
const configuredOwners = new Map<string, Promise<ConfiguredOwner[]>>();

function ownersOf(configured: string): Promise<ConfiguredOwner[]> {
  let owners = configuredOwners.get(configured);
  if (owners === undefined) {
    // The API checked the settings before this runs (app.ts); a bad entry throws ConfigError.
    const tokens = configOf({ PLANPORT_TOKENS: configured }).tokens;
    owners = Promise.all(
      tokens.map(async ({ label, token }) => {
        const owner = await ownerIdOf(token);
        return { digest: await sha256(token), owner, label: label ?? bareTokenLabel(owner) };
      }),
    );
    configuredOwners.set(configured, owners);
  }
  return owners;
}

/**
 * Every owner of PLANPORT_TOKENS with its label, in the configured order.
 *
 * @example (await knownOwners(env.PLANPORT_TOKENS)).map((o) => o.label) // ["alice", "bob"]
 */
export async function knownOwners(configured: string | undefined): Promise<KnownOwner[]> {
  if (configured === undefined) return [];
  return (await ownersOf(configured)).map(({ owner, label }) => ({ owner, label }));
}

/**
 * The owner of a presented token, or null when it matches no configured token (or none is
 * configured: fail closed).
 *
 * @example await ownerOfToken("secret1", "secret1,secret2") // "3f5c…"
 */
export async function ownerOfToken(
  presented: string,
  configured: string | undefined,
): Promise<string | null> {
  return (await knownOwnerOfToken(presented, configured))?.owner ?? null;
}

async function knownOwnerOfToken(
  presented: string,
  configured: string | undefined,
): Promise<KnownOwner | null> {
  if (configured === undefined || presented === "") return null;
  const owners = await ownersOf(configured);
  const digest = await sha256(presented);
  let found: KnownOwner | null = null;
  for (const o of owners) {
    if (crypto.subtle.timingSafeEqual(digest, o.digest) && found === null) {
      found = { owner: o.owner, label: o.label };
    }
  }
  return found;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

async function ownerAccess(
  header: string,
  configured: string | undefined,
): Promise<{ kind: "owner"; owner: string; label: string } | null> {
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) return null;
  const found = await knownOwnerOfToken(token, configured);
  return found === null ? null : { kind: "owner", ...found };
}

const UNAUTHORIZED_MESSAGE =
  "Send Authorization: Bearer <token> with one of the server's PLANPORT_TOKENS (or, on a session's own routes, X-Review-Key with its review key).";

/**
 * Requires a bearer token (list, create, snapshots).
 *
 * @example app.get("/v1/sessions", requireOwner, (c) => c.text(c.get("owner")));
 */
export const requireOwner: MiddlewareHandler<AppEnv> = async (c, next) => {
  const access = await ownerAccess(c.req.header("authorization") ?? "", c.env.PLANPORT_TOKENS);
  if (access === null) {
    return (
      (await overLimit(c, "authFailures", clientAddress(c))) ??
      sendFailure(
        c,
        401,
        "unauthorized",
        "Send Authorization: Bearer <token> with one of the server's PLANPORT_TOKENS.",
      )
    );
  }
  const refused = await overLimit(c, "requests", access.owner);
  if (refused) return refused;
  c.set("access", access);
  c.set("owner", access.owner);
  c.set("label", access.label);
  await next();
};

/**
 * Requires a bearer token or the session's review key (session-scoped routes). A wrong review
 * key is not refused here: the session answers 404, the same as for an unknown session.
 *
 * @example app.get("/v1/sessions/:id", requireSessionAccess, handler);
 */
export const requireSessionAccess: MiddlewareHandler<AppEnv> = async (c, next) => {
  const authorization = c.req.header("authorization");
  const reviewKey = c.req.header("x-review-key");
  const access =
    authorization !== undefined
      ? await ownerAccess(authorization, c.env.PLANPORT_TOKENS)
      : reviewKey !== undefined && reviewKey !== ""
        ? ({ kind: "review", key: reviewKey } as const)
        : null;
  if (access === null) {
    return (
      (await overLimit(c, "authFailures", clientAddress(c))) ??
      sendFailure(c, 401, "unauthorized", UNAUTHORIZED_MESSAGE)
    );
  }
  const limitKey = access.kind === "owner" ? access.owner : `review:${c.req.param("id") ?? ""}`;
  const refused = await overLimit(c, "requests", limitKey);
  if (refused) return refused;
  c.set("access", access);
  await next();
  // A wrong review key answers 404 like an unknown session; it still counts as a failed try.
  if (access.kind === "review" && c.res.status === 404) {
    const limited = await overLimit(c, "authFailures", clientAddress(c));
    if (limited) c.res = limited;
  }
};
