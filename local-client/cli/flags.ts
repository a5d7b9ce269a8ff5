import { statSync } from "node:fs";
import { resolve } from "node:path";
import {
  PLANNER_NAMES,
  type PlannerName,
  VARIANTS,
  type Variant,
} from "../../src/protocol/index.ts";
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
  variant?: string;
  /** Best-of-N: this many sessions with the same planner. */
  attempts?: string;
  /** Best-of-N: one session per planner named (comma-separated). */
  planners?: string;
}

/** The most sessions one best-of-N group starts (CONTRACT: `--attempts` 1–4). */
export const MAX_GROUP_SESSIONS = 4;

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

/**
 * Checks `--variant` against the planning workflows (the server still decides availability).
 *
 * @example
 * variantFlag("deep") // → "deep"; variantFlag("thorough") throws a UsageError
 */
export function variantFlag(name: string | undefined): Variant | undefined {
  if (name === undefined) return undefined;
  if (!(VARIANTS as readonly string[]).includes(name)) {
    throw new UsageError(
      `--variant ${name} is not a variant; choose one of ${VARIANTS.join(", ")}`,
    );
  }
  return name as Variant;
}

/**
 * The planner of each session `plan` starts: one (`--planner`, or the server's choice), `N` of
 * the same (`--attempts N`, 1–4), or one per name (`--planners a,b[,c…]`, at most 4). More than
 * one makes a best-of-N group.
 *
 * @example
 * sessionPlanners({ attempts: "3", planner: "offline" }) // → ["offline", "offline", "offline"]
 * sessionPlanners({ planners: "anthropic,openai" }) // → ["anthropic", "openai"]
 */
export function sessionPlanners(flags: PlanFlags): (PlannerName | undefined)[] {
  if (flags.planners !== undefined) {
    if (flags.planner !== undefined) {
      throw new UsageError("--planners names every planner; leave out --planner");
    }
    if (flags.attempts !== undefined && flags.attempts !== "1") {
      throw new UsageError(
        "--attempts repeats one planner and --planners names several: use one of them",
      );
    }
    const names = flags.planners.split(",").map((n) => n.trim());
    if (names.length < 1 || names.length > MAX_GROUP_SESSIONS || names.some((n) => n === "")) {
      throw new UsageError(
        `--planners takes 1 to ${MAX_GROUP_SESSIONS} planner names separated by commas, e.g. anthropic,openai`,
      );
    }
    return names.map((n) => plannerFlag(n));
  }
  const planner = plannerFlag(flags.planner);
  const attempts = flags.attempts === undefined ? 1 : Number(flags.attempts);
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > MAX_GROUP_SESSIONS) {
    throw new UsageError(`--attempts must be a whole number from 1 to ${MAX_GROUP_SESSIONS}`);
  }
  return Array.from({ length: attempts }, () => planner);
}
