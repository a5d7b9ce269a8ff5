import { z } from "zod";
import {
  err,
  OWNER_LABEL_PATTERN,
  ok,
  PLANNER_NAMES,
  type PlannerName,
  type Result,
} from "./protocol/index.ts";

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
}

/** One entry of PLANPORT_TOKENS: `label:token`, or a bare token (label null). */
export interface ConfiguredToken {
  label: string | null;
  token: string;
}

/**
 * The names bare tokens are shown by: 8 hex digits (CONTRACT "Team review": "its label is the
 * first 8 characters of its owner hash"). A configured label may not look like one.
 */
export const BARE_TOKEN_LABEL_PATTERN = /^[0-9a-f]{8}$/;

/**
 * The label of an owner whose token has none: the first 8 characters of its owner hash.
 *
 * @example bareTokenLabel("3f5c1a2b9d…") // "3f5c1a2b"
 */
export function bareTokenLabel(owner: string): string {
  return owner.slice(0, 8);
}

/** Where webhooks go (docs/PROTOCOL.md "Webhooks"). Never log `secret`. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** A shorter secret is refused: it could be guessed, and a signature would prove nothing. */
export const MIN_WEBHOOK_SECRET_CHARS = 16;

/** What a model's tokens cost, in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Input read from the provider's prompt cache. */
  cache_read: number;
  /** Input written to the provider's prompt cache. */
  cache_write: number;
}

/** The vars {@link readConfig} reads (a subset of the worker's Env). */
export interface ConfigVars {
  PLANPORT_PLANNER?: string;
  PLANPORT_ALLOW_SCRIPTED?: string;
  PLANPORT_MAX_TURNS?: string;
  PLANPORT_RETENTION_DAYS?: string;
  PLANPORT_IDLE_DAYS?: string;
  PLANPORT_RATE_LIMITS?: string;
  PLANPORT_PUBLIC_URL?: string;
  PLANPORT_MODEL_TIMEOUT_MS?: string;
  PLANPORT_MODEL_ATTEMPTS?: string;
  PLANPORT_MODEL_BACKOFF_MS?: string;
  PLANPORT_CONTEXT_TOKENS?: string;
  PLANPORT_PRICES?: string;
  PLANPORT_WEBHOOK_URL?: string;
  PLANPORT_WEBHOOK_SECRET?: string;
  PLANPORT_TOKENS?: string;
  PLANPORT_REQUIRE_APPROVAL?: string;
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
/** Dollars per million tokens; far above any real price, so a misplaced factor is caught. */
const MAX_PRICE_PER_MTOK = 10_000;

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
  const key = JSON.stringify(KEYS.map((k) => vars[k] ?? null));
  let read = cache.get(key);
  if (read === undefined) {
    read = readConfig(vars);
    cache.set(key, read);
  }
  return read;
}
const KEYS: readonly (keyof ConfigVars)[] = [
  "PLANPORT_PLANNER",
  "PLANPORT_ALLOW_SCRIPTED",
  "PLANPORT_MAX_TURNS",
  "PLANPORT_RETENTION_DAYS",
  "PLANPORT_IDLE_DAYS",
  "PLANPORT_RATE_LIMITS",
  "PLANPORT_PUBLIC_URL",
  "PLANPORT_MODEL_TIMEOUT_MS",
  "PLANPORT_MODEL_ATTEMPTS",
  "PLANPORT_MODEL_BACKOFF_MS",
  "PLANPORT_CONTEXT_TOKENS",
  "PLANPORT_PRICES",
  "PLANPORT_WEBHOOK_URL",
  "PLANPORT_WEBHOOK_SECRET",
  "PLANPORT_TOKENS",
  "PLANPORT_REQUIRE_APPROVAL",
];

/**
 * A deployment setting that cannot work. The API answers 500 `server_misconfigured` with its
 * message, so the operator reads what to fix instead of a generic failure.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}

class SettingError extends Error {}

function raw(vars: ConfigVars, name: keyof ConfigVars): string | null {
  const value = vars[name]?.trim();
  return value === undefined || value === "" ? null : value;
}

function refuse(name: string, value: string, expected: string): never {
  throw new SettingError(
    `The server's ${name} is ${JSON.stringify(value)}, which is not ${expected}; fix it in wrangler.toml (or --var) and restart the worker.`,
  );
}

function oneOf<T extends string>(
  vars: ConfigVars,
  name: keyof ConfigVars,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = raw(vars, name);
  if (value === null) return fallback;
  const lower = value.toLowerCase();
  const found = allowed.find((a) => a === lower);
  return found ?? refuse(name, value, `one of ${allowed.join(", ")}`);
}

function number(
  vars: ConfigVars,
  name: keyof ConfigVars,
  fallback: number,
  range: { min: number; max: number },
): number {
  const value = raw(vars, name);
  if (value === null) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < range.min || n > range.max) {
    refuse(name, value, `a number from ${range.min} to ${range.max}`);
  }
  return n;
}

/** A number above 0 (0 itself is refused: "archive at once" is no idle time) up to `max`. */
function positiveNumber(
  vars: ConfigVars,
  name: keyof ConfigVars,
  fallback: number,
  max: number,
): number {
  const value = raw(vars, name);
  if (value === null) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > max) {
    refuse(name, value, `a number of days above 0 and at most ${max}`);
  }
  return n;
}

function wholeNumber(
  vars: ConfigVars,
  name: keyof ConfigVars,
  fallback: number,
  range: { min: number; max: number },
): number {
  const n = number(vars, name, fallback, range);
  if (!Number.isInteger(n)) {
    refuse(name, String(vars[name]), `a whole number from ${range.min} to ${range.max}`);
  }
  return n;
}

function publicUrl(configured: string | undefined): string | null {
  const value = configured?.trim();
  if (value === undefined || value === "") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse("PLANPORT_PUBLIC_URL", value, "a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    refuse("PLANPORT_PUBLIC_URL", value, "an https:// or http:// URL");
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    // Not quoted: credentials, a query or a fragment are where a URL carries secrets.
    throw new SettingError(
      "The server's PLANPORT_PUBLIC_URL is not a plain base URL: it has a query, a fragment or credentials (user:password@); set it to the worker's origin and path only in wrangler.toml (or --var) and restart the worker.",
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/**
 * PLANPORT_WEBHOOK_URL (an http:// or https:// URL without credentials) and
 * PLANPORT_WEBHOOK_SECRET (required with the URL, at least 16 characters; ignored without
 * it). Neither value is ever repeated in a message: the URL of a chat webhook is itself a
 * credential, and the secret is one.
 */
function webhookTarget(url: string | null, secret: string | null): WebhookTarget | null {
  if (url === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_URL is not a URL; set it to an https:// (or http://) address in wrangler.toml (or --var) and restart the worker.",
    );
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    // Not even the scheme is quoted: a value with no scheme reads as one up to its first ":".
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_URL is not an https:// or http:// URL; fix it in wrangler.toml (or --var) and restart the worker.",
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_URL holds credentials (user:password@), which are not sent; put a token in the path or query instead, fix it in wrangler.toml (or --var) and restart the worker.",
    );
  }
  if (secret === null) {
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_SECRET is not set, but PLANPORT_WEBHOOK_URL is: every webhook is signed with it; set it with `wrangler secret put PLANPORT_WEBHOOK_SECRET` (or --var) and restart the worker.",
    );
  }
  if (secret.length < MIN_WEBHOOK_SECRET_CHARS) {
    throw new SettingError(
      `The server's PLANPORT_WEBHOOK_SECRET has ${secret.length} characters, which is fewer than ${MIN_WEBHOOK_SECRET_CHARS}; set a longer one (e.g. \`openssl rand -hex 32\`) and restart the worker.`,
    );
  }
  return { url: parsed.href, secret };
}

const PriceNumber = z.number().min(0).max(MAX_PRICE_PER_MTOK);
const PriceEntry = z.strictObject({
  input: PriceNumber,
  output: PriceNumber,
  cache_read: PriceNumber.optional(),
  cache_write: PriceNumber.optional(),
});
const PricesSchema = z.record(z.string().min(1).max(200), PriceEntry);

/**
 * PLANPORT_PRICES: a JSON object of model name → `{"input", "output", "cache_read"?,
 * "cache_write"?}` in dollars per million tokens. A cache price left out is the input price
 * (no discount or surcharge known).
 */
function prices(value: string | null): Record<string, ModelPrice> {
  if (value === null) return {};
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return refuse("PLANPORT_PRICES", value, "JSON");
  }
  const parsed = PricesSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (at ${issue.path.join(".")})` : "";
    return refuse(
      "PLANPORT_PRICES",
      value.length > 200 ? `${value.slice(0, 200)}…` : value,
      `a JSON object of model name → {"input", "output", "cache_read"?, "cache_write"?}, each in dollars per million tokens from 0 to ${MAX_PRICE_PER_MTOK}${where}`,
    );
  }
  return Object.fromEntries(
    Object.entries(parsed.data).map(([model, p]) => [
      model,
      {
        input: p.input,
        output: p.output,
        cache_read: p.cache_read ?? p.input,
        cache_write: p.cache_write ?? p.input,
      },
    ]),
  );
}

/**
 * PLANPORT_TOKENS (comma-separated; each entry `label:token` or a bare token, split at the
 * first `:`, so a token that itself holds a `:` needs a label) and PLANPORT_REQUIRE_APPROVAL.
 * Labels are 1–32 of a-z, 0-9, `_` and `-`, unique, and never 8 hex digits (the name a bare
 * token is shown by); a token appears once. `other-owner` needs a second token. A message
 * names an entry by its position and never quotes any of it, label included: what reads as a
 * label may be the start of a bare token holding a `:`, and the answer goes to every caller.
 */
function teamSettings(vars: ConfigVars): Pick<WorkerConfig, "tokens" | "requireApproval"> {
  const tokens: ConfiguredToken[] = [];
  /** Where each label and token was first given (1-based positions). */
  const labels = new Map<string, number>();
  const seen = new Map<string, number>();
  const entries = (vars.PLANPORT_TOKENS ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  entries.forEach((entry, index) => {
    const position = index + 1;
    const colon = entry.indexOf(":");
    const label = colon < 0 ? null : entry.slice(0, colon).trim();
    const token = colon < 0 ? entry : entry.slice(colon + 1).trim();
    const where = `entry ${position} of PLANPORT_TOKENS`;
    if (label !== null) {
      if (!OWNER_LABEL_PATTERN.test(label) || BARE_TOKEN_LABEL_PATTERN.test(label)) {
        throw new SettingError(
          `The server's ${where} has a label (the part before its first ":") that is not 1–32 of a-z, 0-9, _ and - (starting with a letter or digit, and not 8 hex digits: those name bare tokens); a token that holds a ":" needs a label in front (label:token). Fix it and restart the worker.`,
        );
      }
      const first = labels.get(label);
      if (first !== undefined) {
        throw new SettingError(
          `The server's ${where} has the same label as entry ${first} of PLANPORT_TOKENS; labels name one owner each, so make them unique and restart the worker.`,
        );
      }
      labels.set(label, position);
    }
    if (token === "") {
      throw new SettingError(
        `The server's ${where} has a label but no token after the ":"; write label:token and restart the worker.`,
      );
    }
    const first = seen.get(token);
    if (first !== undefined) {
      throw new SettingError(
        `The server's ${where} repeats the token of entry ${first}; each token is one owner, so list it once and restart the worker.`,
      );
    }
    seen.set(token, position);
    tokens.push({ label, token });
  });
  const requireApproval = oneOf(vars, "PLANPORT_REQUIRE_APPROVAL", ["none", "other-owner"], "none");
  if (requireApproval === "other-owner" && tokens.length < 2) {
    throw new SettingError(
      "The server's PLANPORT_REQUIRE_APPROVAL is other-owner, but PLANPORT_TOKENS holds fewer than two tokens, so no plan could ever be approved; add a token for the approver (label:token) or set it to none, and restart the worker.",
    );
  }
  return { tokens, requireApproval };
}
