import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { z } from "zod";

/**
 * `~/.planport`, or `PLANPORT_HOME` (tests relocate it).
 *
 * @example
 * planportHome({ PLANPORT_HOME: "/tmp/h" }) // → "/tmp/h"
 */
export function planportHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.PLANPORT_HOME || join(homedir(), ".planport");
}

/**
 * The embedded worker's data folder: `$XDG_DATA_HOME/planport` or `~/.local/share/planport`.
 *
 * @example
 * dataDir({ XDG_DATA_HOME: "/tmp/d" }) // → "/tmp/d/planport"
 */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  return join(base, "planport");
}

/** `~/.planport/config.json`, written by `planport serve`. */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(planportHome(env), "config.json");
}

/** `~/.planport/plans`, where teleported plans go unless `--plans-dir` says otherwise. */
export function defaultPlansDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(planportHome(env), "plans");
}

const UserConfigSchema = z.object({ url: z.string(), token: z.string().min(1) });
export type UserConfig = z.infer<typeof UserConfigSchema>;

/** The config `serve` wrote, or null when there is none. A broken file is an error, not ignored. */
export function readUserConfig(env: NodeJS.ProcessEnv = process.env): UserConfig | null {
  const path = userConfigPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const parsed = UserConfigSchema.safeParse(safeJson(text));
  if (!parsed.success) {
    throw new Error(`${path} is not a planport config ({"url", "token"})`);
  }
  return parsed.data;
}

/**
 * Writes the user config (mode 0600) and returns its path.
 *
 * @example
 * writeUserConfig({ url: "http://127.0.0.1:8787", token }) // → "~/.planport/config.json"
 */
export function writeUserConfig(config: UserConfig, env: NodeJS.ProcessEnv = process.env): string {
  const path = userConfigPath(env);
  writePrivateFile(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}

/**
 * Writes a file only its owner can read (mode 0600, directory 0700), atomically, so a token is
 * never readable by other local users, not even for a moment.
 */
export function writePrivateFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** A new random API token (256 bits, base64url). */
export function generateToken(): string {
  return `pp_${randomBytes(32).toString("base64url")}`;
}

/** JSON.parse that answers undefined instead of throwing (the caller validates with zod). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
