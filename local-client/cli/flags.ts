import { type Stats, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { resolve } from "node:path";
import {
  MAX_APPROVABLE_PLAN_CHARS,
  MAX_APPROVERS,
  OWNER_LABEL_PATTERN,
  PLANNER_NAMES,
  type PlannerName,
  VARIANTS,
  type Variant,
} from "../../src/protocol/index.ts";
import { parseDuration } from "../duration.ts";
import { UsageError } from "../errors.ts";
import { presetBinary, presetMissingText, presetName } from "../handoff/presets.ts";
import { findOnPath, plansDirProblem } from "../handoff/teleport.ts";
import { terminalLine, truncateLine } from "../terminal/text.ts";

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
  /** No bell or desktop notification when the plan is ready or input is needed. */
  quiet?: boolean;
}

export interface PlanFlags extends PollFlags {
  planner?: string;
  variant?: string;
  /** Best-of-N: this many sessions with the same planner. */
  attempts?: string;
  /** Best-of-N: one session per planner named (comma-separated). */
  planners?: string;
  /** A draft to refine (`seed_plan`): a file, or `-` for stdin. */
  seedPlan?: string;
  /** Owner labels whose approval the plan needs (comma-separated; team review). */
  approvers?: string;
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
  const onTeleport = flags.onTeleport ?? (process.env.PLANPORT_ON_TELEPORT || undefined);
  assertHandOffReady(onTeleport, flags.plansDir, repoRoot);
  return {
    repoRoot,
    timeoutMs: duration(flags.timeout, "--timeout"),
    intervalMs: duration(flags.interval, "--interval"),
    plansDir: flags.plansDir,
    onTeleport,
    json: flags.json === true,
  };
}

/**
 * Refuses at the start what would make a teleported plan's hand-off fail at the end, after the
 * planning and the review: a preset (`--on-teleport codex`) whose program is not on PATH, and a
 * `--plans-dir` that cannot be written to. (A `--plans-dir` outside the repository is not
 * refused here: the hand-off warns and writes to the default folder, teleport.ts.)
 *
 * @example
 * assertHandOffReady("codex", undefined, "/src/app")
 * // throws UsageError "codex is not installed (no `codex` on PATH). Install it with: npm i -g @openai/codex"
 */
export function assertHandOffReady(
  onTeleport: string | undefined,
  plansDir: string | undefined,
  repoRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const preset = onTeleport === undefined ? null : presetName(onTeleport);
  if (preset !== null && findOnPath(presetBinary(preset), env) === null) {
    throw new UsageError(presetMissingText(preset));
  }
  if (plansDir === undefined) return;
  const problem = plansDirProblem({ requested: plansDir, repoRoot, env });
  if (problem !== null) {
    throw new UsageError(
      `--plans-dir ${plansDir} cannot hold plan files: ${problem}. Pass a folder you can write to inside the repository, or leave out --plans-dir (~/.planport/plans).`,
    );
  }
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
 * `--approvers a,b`: the owner labels whose approval the plan needs (docs/PROTOCOL.md "Team
 * review"), checked for shape here; whether each is a known owner only the server can say.
 *
 * @example
 * approversFlag("bob, carol") // → ["bob", "carol"]
 * approversFlag("Bob") // throws UsageError "--approvers: Bob is not an owner label; …"
 */
export function approversFlag(list: string | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  const labels = list
    .split(",")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  if (labels.length === 0) {
    throw new UsageError("--approvers needs at least one owner label, e.g. --approvers bob,carol");
  }
  if (labels.length > MAX_APPROVERS) {
    throw new UsageError(`--approvers names ${labels.length} owners; at most ${MAX_APPROVERS}`);
  }
  for (const label of labels) {
    if (!OWNER_LABEL_PATTERN.test(label)) {
      throw new UsageError(
        `--approvers: ${terminalLine(label).slice(0, 40)} is not an owner label; labels are 1–32 of a-z, 0-9, _ and - (ask your server's admin for your teammates' labels)`,
      );
    }
  }
  return labels;
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

/** The longest prompt `plan` derives from a draft when the task is left out (one line). */
export const SEED_TASK_MAX_CHARS = 120;
/** UTF-8 takes at most 4 bytes per UTF-16 unit of the limit: more bytes are too long for sure. */
const MAX_SEED_BYTES = MAX_APPROVABLE_PLAN_CHARS * 4;

/**
 * The text of a draft (`--seed-plan`), checked as the server will check it, with a sentence
 * naming the file when it cannot be sent: empty, not UTF-8 text, or too long. Pure.
 *
 * @example
 * seedPlanText(new TextEncoder().encode("# Add OAuth\n"), "draft.md") // → "# Add OAuth\n"
 * seedPlanText(new Uint8Array(), "draft.md") // throws UsageError "--seed-plan draft.md is empty; …"
 */
export function seedPlanText(bytes: Uint8Array, name: string): string {
  const shown = `--seed-plan ${name}`;
  if (bytes.byteLength > MAX_SEED_BYTES) throw tooLong(shown);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${shown} is not UTF-8 text; save the draft as UTF-8 markdown`);
  }
  if (text.includes("\u0000"))
    throw new UsageError(`${shown} is not text (it holds NUL bytes); pass a markdown draft`);
  if (text.trim() === "")
    throw new UsageError(`${shown} is empty; write the draft into it, or leave out --seed-plan`);
  if (text.length > MAX_APPROVABLE_PLAN_CHARS) throw tooLong(shown, text.length);
  return text;
}

function tooLong(shown: string, chars?: number): UsageError {
  return new UsageError(
    `${shown} is too long${chars === undefined ? "" : ` (${chars} characters)`}: a draft may have at most ${MAX_APPROVABLE_PLAN_CHARS} characters`,
  );
}

/** Where a draft is read from: stdin's bytes (a seam for tests), and whether stdin is a terminal. */
export interface SeedSource {
  stdin: () => Promise<Uint8Array>;
  stdinIsTerminal: boolean;
}

/**
 * Reads `--seed-plan FILE` (`-`: stdin) and checks it ({@link seedPlanText}); undefined without
 * the flag. Every refusal is a {@link UsageError} whose sentence names the file.
 *
 * @example
 * await readSeedPlan("notes/plan.md") // → "# Add OAuth\n…"
 */
export async function readSeedPlan(
  flag: string | undefined,
  source: SeedSource = processStdin(),
): Promise<string | undefined> {
  if (flag === undefined) return undefined;
  if (flag === "-") {
    if (source.stdinIsTerminal)
      throw new UsageError(
        "--seed-plan - reads the draft from stdin, which is a terminal here; pipe the draft in (planport plan --seed-plan - < plan.md)",
      );
    return seedPlanText(await source.stdin(), "- (stdin)");
  }
  const path = resolve(flag);
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    throw new UsageError(`--seed-plan ${flag}: there is no file ${path}`);
  }
  if (stats.isDirectory())
    throw new UsageError(`--seed-plan ${flag} is a directory; pass the draft's file`);
  if (!stats.isFile()) throw new UsageError(`--seed-plan ${flag} is not a regular file`);
  if (stats.size > MAX_SEED_BYTES) throw tooLong(`--seed-plan ${flag}`);
  let bytes: Uint8Array;
  try {
    bytes = await readAtMost(path, MAX_SEED_BYTES + 1);
  } catch (err) {
    throw new UsageError(`--seed-plan ${flag} cannot be read: ${(err as Error).message}`);
  }
  return seedPlanText(bytes, flag);
}

/**
 * The session's prompt: the task's words, or — when they are left out and a draft is given —
 * "Refine this plan: <the draft's first heading>" (else its first line), one short line.
 * Neither is a usage error.
 *
 * @example
 * planTask([], "# Add OAuth login\n\n1. …") // → "Refine this plan: Add OAuth login"
 * planTask(["add", "OAuth"], "# x") // → "add OAuth"
 */
export function planTask(words: readonly string[], seed: string | undefined): string {
  const task = words.join(" ").trim();
  if (task !== "") return task;
  if (seed === undefined)
    throw new UsageError(
      "describe the task to plan, e.g. planport plan add OAuth login, or pass a draft to refine with --seed-plan FILE",
    );
  const lead = "Refine this plan";
  const title = truncateLine(draftTitle(seed), SEED_TASK_MAX_CHARS - lead.length - 2);
  return title === "" ? lead : `${lead}: ${title}`;
}

/** A draft's first heading without its `#`s, else its first non-empty line; one clean line. */
function draftTitle(seed: string): string {
  let first = "";
  for (const line of seed.slice(0, 20_000).split(/\r\n|\r|\n/)) {
    const clean = terminalLine(line);
    if (clean === "") continue;
    const heading = /^#{1,6}(?:\s|$)/.test(clean);
    if (heading) {
      // Without the opening #s, and a closing run of them after a space ("## Add login ##").
      const text = clean.replace(/^#+/, "").replace(/\s#+$/, "").trim();
      if (text !== "") return text;
    } else if (first === "") first = clean;
  }
  return first;
}

async function readAtMost(path: string, maxBytes: number): Promise<Uint8Array> {
  const file = await open(path, "r");
  try {
    const buffer = new Uint8Array(maxBytes);
    let filled = 0;
    while (filled < maxBytes) {
      const { bytesRead } = await file.read(buffer, filled, maxBytes - filled, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await file.close();
  }
}

function processStdin(): SeedSource {
  return {
    stdinIsTerminal: process.stdin.isTTY === true,
    stdin: async () => {
      const chunks: Uint8Array[] = [];
      let total = 0;
      for await (const chunk of process.stdin as AsyncIterable<Uint8Array>) {
        chunks.push(chunk);
        total += chunk.byteLength;
        // Enough to know it is too long; the rest is never held in memory.
        if (total > MAX_SEED_BYTES) break;
      }
      return Buffer.concat(chunks);
    },
  };
}
