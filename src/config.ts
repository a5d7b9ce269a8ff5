import { type ModelPrice, prices } from "./config/prices.ts";
import { type ConfiguredToken, teamSettings } from "./config/tokens.ts";
import { publicUrl, type WebhookTarget, webhookTarget } from "./config/urls.ts";
import {
  CONFIG_KEYS,
  type ConfigVars,
  number,
  oneOf,
  positiveNumber,
  raw,
  SettingError,
  wholeNumber,
} from "./config/vars.ts";
import { err, ok, PLANNER_NAMES, type PlannerName, type Result } from "./protocol/index.ts";

/**
 * The worker's settings (wrangler.toml vars, `--var`), parsed with one policy: an unset or
 * empty var takes its default; a value that is set but wrong is refused with a sentence naming
 * the var, what it holds and what it must be — never silently replaced, because a typo in a
 * deployment should be seen, not turn into a 2-minute hang or a purge a week early. The API
 * checks the settings before it serves a request (500 `server_misconfigured` naming the var),
 * and that answer goes to every caller, signed in or not: a var that can hold a secret
 * (PLANPORT_TOKENS, the webhook URL and secret, a URL with credentials or a query) is named,
 * and its entries by position, never quoted in any part. Pure.
 */

/** Model calls allowed since the last human input before `result/error_max_turns`. */
export const DEFAULT_MAX_TURNS = 50;
/** Days an archived or ended session is kept. */
export const DEFAULT_RETENTION_DAYS = 7;
/** Days without activity after which a session that never ended is archived (DESIGN.md "Retention"). */
export const DEFAULT_IDLE_DAYS = 30;

export interface WorkerConfig {
  planner: PlannerName;
  allowScripted: boolean;
  maxTurns: number;
  retentionMs: number;
  /**
   * PLANPORT_IDLE_DAYS: a session that never ended is archived after this long without activity
   * (DESIGN.md "Retention"), then purged like any archived session.
   */
  idleMs: number;
  rateLimits: boolean;
  /** Base of absolute links (origin + path prefix, no trailing slash), or null: the request's. */
  publicUrl: string | null;
  model: { timeoutMs: number; attempts: number; backoffMs: number };
  /**
   * PLANPORT_CONTEXT_TOKENS: the context budget of every model planner's conversations, or
   * null for each model's own default (src/planner/models/context-windows.ts).
   */
  contextTokens: number | null;
  /** PLANPORT_PRICES: prices per model that replace or extend the built-in price table. */
  prices: Readonly<Record<string, ModelPrice>>;
  /**
   * PLANPORT_WEBHOOK_URL and PLANPORT_WEBHOOK_SECRET: where phase changes and outcomes are
   * POSTed and the key they are signed with, or null when no URL is set (no webhooks).
   */
  webhook: WebhookTarget | null;
  /**
   * PLANPORT_TOKENS: the API tokens, each with its owner label or null (a bare token). Never log
   * a token.
   */
  tokens: readonly ConfiguredToken[];
  /**
   * PLANPORT_REQUIRE_APPROVAL: `other-owner` makes every session need the approval of an owner
   * other than its requester (docs/PROTOCOL.md "Team review"); `none` by default.
   */
  requireApproval: "none" | "other-owner";
  /**
   * PLANPORT_EXEC_NETWORK: `on` lets cloud execution's commands reach the internet; `off` (the
   * default) gives them none (docs/EXECUTION.md).
   */
  executionNetwork: boolean;
}

const MS_PER_DAY = 86_400_000;

/**
 * Bounds that keep one loop step (attempts × timeout + backoff) well inside a Durable Object
 * alarm's 15-minute wall-time limit.
 */
const MODEL_TIMEOUT_RANGE_MS = { min: 100, max: 300_000 } as const;
const MODEL_ATTEMPTS_RANGE = { min: 1, max: 8 } as const;
const MODEL_BACKOFF_RANGE_MS = { min: 0, max: 60_000 } as const;
/** Below this the system prompt and tools alone would not fit; 10 M covers the largest windows. */
const CONTEXT_TOKENS_RANGE = { min: 2_000, max: 10_000_000 } as const;

/**
 * The settings, or the first problem as a sentence.
 *
 * @example
 * readConfig({ PLANPORT_MAX_TURNS: "20" }) // { ok: true, value: { maxTurns: 20, … } }
 * readConfig({ PLANPORT_MAX_TURNS: "lots" }).ok // false: "PLANPORT_MAX_TURNS is "lots", …"
 */
export function readConfig(vars: ConfigVars): Result<WorkerConfig, string> {
  try {
    return ok({
      planner: oneOf(vars, "PLANPORT_PLANNER", PLANNER_NAMES, "auto"),
      allowScripted: oneOf(vars, "PLANPORT_ALLOW_SCRIPTED", ["true", "false"], "false") === "true",
      maxTurns: wholeNumber(vars, "PLANPORT_MAX_TURNS", DEFAULT_MAX_TURNS, { min: 1, max: 1_000 }),
      retentionMs: Math.round(
        number(vars, "PLANPORT_RETENTION_DAYS", DEFAULT_RETENTION_DAYS, { min: 0, max: 3_650 }) *
          MS_PER_DAY,
      ),
      idleMs: Math.max(
        1,
        Math.round(
          positiveNumber(vars, "PLANPORT_IDLE_DAYS", DEFAULT_IDLE_DAYS, 3_650) * MS_PER_DAY,
        ),
      ),
      rateLimits: oneOf(vars, "PLANPORT_RATE_LIMITS", ["on", "off"], "on") === "on",
      publicUrl: publicUrl(vars.PLANPORT_PUBLIC_URL),
      model: {
        timeoutMs: wholeNumber(vars, "PLANPORT_MODEL_TIMEOUT_MS", 120_000, MODEL_TIMEOUT_RANGE_MS),
        attempts: wholeNumber(vars, "PLANPORT_MODEL_ATTEMPTS", 4, MODEL_ATTEMPTS_RANGE),
        backoffMs: wholeNumber(vars, "PLANPORT_MODEL_BACKOFF_MS", 1_000, MODEL_BACKOFF_RANGE_MS),
      },
      contextTokens: raw(vars, "PLANPORT_CONTEXT_TOKENS")
        ? wholeNumber(vars, "PLANPORT_CONTEXT_TOKENS", 0, CONTEXT_TOKENS_RANGE)
        : null,
      prices: prices(raw(vars, "PLANPORT_PRICES")),
      webhook: webhookTarget(
        raw(vars, "PLANPORT_WEBHOOK_URL"),
        raw(vars, "PLANPORT_WEBHOOK_SECRET"),
      ),
      executionNetwork: oneOf(vars, "PLANPORT_EXEC_NETWORK", ["on", "off"], "off") === "on",
      ...teamSettings(vars),
    });
  } catch (error) {
    if (error instanceof SettingError) return err(error.message);
    throw error;
  }
}

/** Cached per distinct set of vars: every request reads the settings. */
const cache = new Map<string, Result<WorkerConfig, string>>();

/**
 * {@link readConfig}, cached, throwing a {@link ConfigError} for a bad setting. For code behind
 * the API's check (the session object, the planning engine), where a bad setting can only mean
 * the vars changed under a running session.
 *
 * @example
 * const { retentionMs } = configOf(env);
 */
export function configOf(vars: ConfigVars): WorkerConfig {
  const read = cachedConfig(vars);
  if (!read.ok) throw new ConfigError(read.error);
  return read.value;
}

/** {@link readConfig}, cached. */
export function cachedConfig(vars: ConfigVars): Result<WorkerConfig, string> {
  const key = JSON.stringify(CONFIG_KEYS.map((k) => vars[k] ?? null));
  let read = cache.get(key);
  if (read === undefined) {
    read = readConfig(vars);
    cache.set(key, read);
  }
  return read;
}
/**
 * A deployment setting that cannot work. The API answers 500 `server_misconfigured` with its
 * message, so the operator reads what to fix instead of a generic failure.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}
