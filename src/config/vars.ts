/**
 * How one var of the worker's settings is read (config.ts): unset or empty takes its default;
 * set but wrong throws a {@link SettingError} whose sentence names the var, what it holds and
 * what it must be. Pure.
 */

/** The vars config.ts `readConfig` reads (a subset of the worker's Env). */
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
  PLANPORT_EXEC_NETWORK?: string;
}

/** Every var of {@link ConfigVars}, in one order (the settings' cache key). */
export const CONFIG_KEYS: readonly (keyof ConfigVars)[] = [
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
  "PLANPORT_EXEC_NETWORK",
];

/** A setting that is set but wrong; readConfig answers its message (config.ts). */
export class SettingError extends Error {}

/** The var's value, trimmed; null when unset or empty (it takes its default). */
export function raw(vars: ConfigVars, name: keyof ConfigVars): string | null {
  const value = vars[name]?.trim();
  return value === undefined || value === "" ? null : value;
}

/** Refuses a value that is set but wrong, with a sentence naming the var and what it must be. */
export function refuse(name: string, value: string, expected: string): never {
  throw new SettingError(
    `The server's ${name} is ${JSON.stringify(value)}, which is not ${expected}; fix it in wrangler.toml (or --var) and restart the worker.`,
  );
}

export function oneOf<T extends string>(
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

export function number(
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
export function positiveNumber(
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

export function wholeNumber(
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
