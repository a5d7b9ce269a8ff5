import { statSync } from "node:fs";
import { resolve } from "node:path";
import { PLANNER_NAMES, type PlannerName } from "../../src/protocol/index.ts";
import { parseDuration } from "../duration.ts";
import { UsageError } from "../errors.ts";

/** The flags of `plan` and `attach`, validated before anything touches the network. */

export interface PollFlags {
  repo?: string;
  server?: string;
  token?: string;
  timeout?: string;
  interval?: string;
  plansDir?: string;
  onTeleport?: string;
  json?: boolean;
}

export interface PlanFlags extends PollFlags {
  planner?: string;
}

export interface Settings {
  repoRoot: string;
  timeoutMs?: number;
  intervalMs?: number;
  plansDir?: string;
  onTeleport?: string;
  json: boolean;
}

/**
 * Validates the polling flags before anything touches the network.
 *
 * @example
 * pollSettings({ timeout: "10m", repo: "." }) // → { repoRoot: "/abs/path", timeoutMs: 600_000, … }
 */
export function pollSettings(flags: PollFlags, defaultRepo?: string): Settings {
  const repoRoot = resolve(flags.repo ?? defaultRepo ?? process.cwd());
  let isDir = false;
  try {
    isDir = statSync(repoRoot).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new UsageError(`--repo ${repoRoot} is not a directory`);
  return {
    repoRoot,
    timeoutMs: duration(flags.timeout, "--timeout"),
    intervalMs: duration(flags.interval, "--interval"),
    plansDir: flags.plansDir,
    onTeleport: flags.onTeleport ?? (process.env.PLANPORT_ON_TELEPORT || undefined),
    json: flags.json === true,
  };
}

function duration(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseDuration(text);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

/**
 * Checks `--planner` against the planners the API knows (the server still decides availability).
 *
 * @example
 * plannerFlag("offline") // → "offline"; plannerFlag("gpt") throws a UsageError
 */
export function plannerFlag(name: string | undefined): PlannerName | undefined {
  if (name === undefined) return undefined;
  if (!(PLANNER_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(
      `--planner ${name} is not a planner; choose one of ${PLANNER_NAMES.join(", ")}`,
    );
  }
  return name as PlannerName;
}
