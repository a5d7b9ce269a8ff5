import type { Context, MiddlewareHandler, Next } from "hono";
import { bareTokenLabel } from "../config/tokens.ts";
import { configOf } from "../config.ts";
import { SESSION_ID_PATTERN } from "../protocol/index.ts";
import { reviewHeaders, unavailablePage } from "../review/index.ts";
import type { AppEnv } from "./app-env.ts";
import { sendFailure } from "./errors.ts";
import {
  countFailedAuth,
  countRequest,
  type LimitRefusal,
  overLimit,
  rateLimited,
} from "./rate-limit.ts";

/**
 * Authentication (DESIGN.md "Auth and access"). A bearer token is matched against every
 * configured token by comparing sha256 digests in constant time, with no early exit; the owner
 * is a hash of the token, never the token. Session-scoped routes also accept the session's
 * review key (`X-Review-Key`), which the session object checks itself. Refused credentials
 * are counted against their caller, never against the owner or session they tried to reach.
 */

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
 * The configured tokens, for the server's proof (healthz.ts); none when PLANPORT_TOKENS is
 * unset or malformed (the API reports that as 500 server_misconfigured; a proof just fails).
 *
 * @example configuredTokens("alice:t1,t2") // ["t1", "t2"]
 */
export function configuredTokens(configured: string | undefined): string[] {
  if (configured === undefined) return [];
  try {
    return configOf({ PLANPORT_TOKENS: configured }).tokens.map((t) => t.token);
  } catch {
    return [];
  }
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

/** A refused credential: counted against its caller (rate-limit.ts), then 401 or 429. */
async function refuseCredentials(c: Context<AppEnv>, message: string): Promise<Response> {
  const limited = await countFailedAuth(c);
  return limited ? rateLimited(c, limited) : sendFailure(c, 401, "unauthorized", message);
}

/**
 * Requires a bearer token (list, create, snapshots).
 *
 * @example app.get("/v1/sessions", requireOwner, (c) => c.text(c.get("owner")));
 */
export const requireOwner: MiddlewareHandler<AppEnv> = async (c, next) => {
  const access = await ownerAccess(c.req.header("authorization") ?? "", c.env.PLANPORT_TOKENS);
  if (access === null) {
    return await refuseCredentials(
      c,
      "Send Authorization: Bearer <token> with one of the server's PLANPORT_TOKENS.",
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
 * Requires a bearer token or the session's review key (session-scoped routes). A review key is
 * checked by the session itself (see {@link withReviewKey}).
 *
 * @example app.get("/v1/sessions/:id", requireSessionAccess, handler);
 */
export const requireSessionAccess: MiddlewareHandler<AppEnv> = async (c, next) => {
  const authorization = c.req.header("authorization");
  const reviewKey = c.req.header("x-review-key");
  if (authorization === undefined && reviewKey !== undefined && reviewKey !== "") {
    c.set("access", { kind: "review", key: reviewKey });
    return await withReviewKey(c, c.req.param("id") ?? "", reviewKey, next, (refusal) =>
      rateLimited(c, refusal),
    );
  }
  const access =
    authorization === undefined ? null : await ownerAccess(authorization, c.env.PLANPORT_TOKENS);
  if (access === null) return await refuseCredentials(c, UNAUTHORIZED_MESSAGE);
  const refused = await overLimit(c, "requests", access.owner);
  if (refused) return refused;
  c.set("access", access);
  await next();
};

/**
 * Counts the review page (`GET /review/:id?key=`), whose link key is its credential, as the
 * API counts `X-Review-Key` ({@link withReviewKey}); a refusal is a plain page with 429.
 *
 * @example app.use("/review/:id", countReviewPage);
 */
export const countReviewPage: MiddlewareHandler<AppEnv> = async (c, next) => {
  const sessionId = c.req.param("id") ?? "";
  // Only a session's page holds a key ("/review/diagram" does not).
  if (!SESSION_ID_PATTERN.test(sessionId)) return await next();
  return await withReviewKey(c, sessionId, c.req.query("key") ?? "", next, (refusal) => {
    const headers = reviewHeaders();
    headers.set("Retry-After", String(refusal.periodS));
    return new Response(unavailablePage(refusal.message), { status: 429, headers });
  });
};

/**
 * Runs the handler of a request made with a review key, which only the session can check (a
 * wrong key answers 404, like an unknown session). The request spends the budget of its
 * session and of the key it presents (by digest), never the session's alone: wrong keys,
 * however many, leave the real decision and view keys working. A request the session refuses
 * counts as a failed authentication of its caller.
 */
async function withReviewKey(
  c: Context<AppEnv>,
  sessionId: string,
  key: string,
  next: Next,
  refuse: (refusal: LimitRefusal) => Response,
): Promise<Response | undefined> {
  const budget = await countRequest(
    c.env,
    "requests",
    `review:${sessionId}:${await reviewKeyTag(key)}`,
  );
  if (budget) return refuse(budget);
  await next();
  if (c.res.status === 404) {
    const limited = await countFailedAuth(c);
    if (limited) c.res = refuse(limited);
  }
  return undefined;
}

const REVIEW_KEY_HASH_PREFIX = "planport:review-key:";

/** What a presented review key is counted by: a hash, so no key ever reaches a limiter. */
async function reviewKeyTag(key: string): Promise<string> {
  return hex(await sha256(REVIEW_KEY_HASH_PREFIX + key)).slice(0, OWNER_ID_HEX_CHARS);
}
