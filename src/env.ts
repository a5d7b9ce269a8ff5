import type { CommandContainerRpc } from "./execution/container-transport.ts";
import type { ExecutionEnv } from "./execution/executor.ts";
import type { OwnerIndexRpc } from "./owner/rpc.ts";
import type { PlannerEnv } from "./planner/port.ts";
import type { SessionRpc } from "./session/rpc.ts";

/**
 * The worker's bindings and vars (wrangler.toml). Every var is a string; parse at use. The
 * model providers' keys, addresses and the model-call settings are the planners' part
 * ({@link PlannerEnv}). A module of types only, read by every part of the worker: the Durable
 * Object namespaces are typed by the objects' RPC surfaces (session/rpc.ts, owner/rpc.ts), not
 * by their classes, so reading `Env` never imports an object.
 */
export interface Env extends PlannerEnv, ExecutionEnv {
  SESSIONS: DurableObjectNamespace<SessionRpc>;
  OWNERS: DurableObjectNamespace<OwnerIndexRpc>;
  SNAPSHOTS: R2Bucket;
  /**
   * One container-enabled object per executing session (wrangler.toml `[[containers]]`,
   * src/execution/cloudflare-container.ts). Declared everywhere; it runs containers only on
   * Cloudflare (wrangler dev and the embedded worker use the local executor).
   */
  EXECUTOR_CONTAINERS?: DurableObjectNamespace<CommandContainerRpc>;
  /** `on` lets cloud execution's commands reach the internet; `off` (default) none. */
  PLANPORT_EXEC_NETWORK?: string;
  /**
   * Comma-separated API tokens, each bare or `label:token`; each token is one owner. Unset =
   * every call is refused.
   */
  PLANPORT_TOKENS?: string;
  /** `none` (default) or `other-owner`: every plan needs another owner's approval. */
  PLANPORT_REQUIRE_APPROVAL?: string;
  PLANPORT_PLANNER?: string;
  PLANPORT_RETENTION_DAYS?: string;
  /** Days without activity before a session that never ended is archived (default 30). */
  PLANPORT_IDLE_DAYS?: string;
  PLANPORT_MAX_TURNS?: string;
  /** "true" lets sessions use the `scripted` planner (tests, replays). */
  PLANPORT_ALLOW_SCRIPTED?: string;
  /** `off` turns the rate limits off (they are on by default; the limits are in wrangler.toml). */
  PLANPORT_RATE_LIMITS?: string;
  /** Rate limiters (wrangler.toml `[[ratelimits]]`; see src/api/rate-limit.ts). */
  RATE_LIMIT_REQUESTS?: RateLimit;
  RATE_LIMIT_CREATES?: RateLimit;
  RATE_LIMIT_UPLOADS?: RateLimit;
  RATE_LIMIT_AUTH_FAILURES?: RateLimit;
  RATE_LIMIT_AUTH_FAILURES_ALL?: RateLimit;
  /**
   * The worker's public address (e.g. https://planport.example.com). When set, review links are
   * built on it rather than on the request's Host, which a proxy may pass through unchecked.
   */
  PLANPORT_PUBLIC_URL?: string;
  /** Where phase changes and outcomes are POSTed (docs/PROTOCOL.md "Webhooks"); unset: none. */
  PLANPORT_WEBHOOK_URL?: string;
  /** The HMAC-SHA256 key of `X-Planport-Signature` (a secret; required with the URL). */
  PLANPORT_WEBHOOK_SECRET?: string;
}
