import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { readableText } from "../../src/protocol/index.ts";
import { defaultPlansDir } from "../home.ts";
import {
  type PresetName,
  presetBinary,
  presetLaunch,
  presetMissingText,
  presetName,
} from "./presets.ts";

/**
 * What a teleport does on this machine: the plan sent back from the browser is saved as a plan
 * file and handed to whatever carries it out here (an agent CLI, an editor, a script). No
 * terminal I/O of its own: the CLI (cli/handoff.ts) asks the user and reports.
 *
 * The plan that crosses into the file and the agent is the plan as a reader sees it (protocol
 * `readableText`: every hidden character a visible mark), as the review page showed it. The
 * poller already hands over that text; these functions are also the library's, open to a plan
 * from anywhere, so they apply the rule again (it changes nothing twice).
 */

/** implement here · start a new session (fresh context) · cancel (keep the file). */
export type TeleportChoice = "implement" | "fresh" | "cancel";

const MAX_SLUG_CHARS = 60;

/**
 * The folder plan files go to. A `--plans-dir` that resolves outside the repository is not used
 * (with a warning, falling back to the default): a plan file is written by a remote session's
 * output, so where it lands must stay where the user expects — this checkout or `~/.planport`.
 * The CLI refuses such a folder before any work ({@link plansDirProblem}); this fallback is
 * for the library's callers. Symlinks are resolved first, so a link inside the repository
 * cannot point the write elsewhere.
 *
 * @example
 * resolvePlansDir({ requested: "docs/plans", repoRoot: "/src/app" })
 * // → { dir: "/src/app/docs/plans" }
 */
export function resolvePlansDir(opts: {
  requested?: string;
  repoRoot: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}): { dir: string; warning?: string } {
  const fallback = defaultPlansDir(opts.env);
  if (opts.requested === undefined || opts.requested === "") return { dir: fallback };
  const wanted = resolve(opts.cwd ?? process.cwd(), opts.requested);
  const root = realPathOfExisting(resolve(opts.repoRoot));
  const real = realPathOfExisting(wanted);
  const rel = relative(root, real);
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) return { dir: real };
  return {
    dir: fallback,
    warning: `--plans-dir ${opts.requested} is outside the repository (${root}); writing the plan to ${fallback} instead`,
  };
}

/**
 * Why plan files could not be written to the folder `--plans-dir` leads to (after the rule of
 * {@link resolvePlansDir}), or null when they can: asked before any work, so a teleported plan
 * never arrives with nowhere to go. The folder need not exist yet: its deepest existing
 * ancestor must then be a folder this user may write to.
 *
 * @example
 * plansDirProblem({ requested: "README.md/plans", repoRoot: "/src/app" })
 * // → "/src/app/README.md is not a folder"
 */
export function plansDirProblem(opts: {
  requested?: string;
  repoRoot: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}): string | null {
  const { dir, warning } = resolvePlansDir(opts);
  if (warning !== undefined) {
    const wanted = realPathOfExisting(resolve(opts.cwd ?? process.cwd(), opts.requested ?? ""));
    return `${wanted} is outside the repository (${realPathOfExisting(resolve(opts.repoRoot))})`;
  }
  let path = dir;
  for (;;) {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return `${path} cannot be read (${code})`;
      const parent = dirname(path);
      if (parent === path) return `${path} does not exist`;
      path = parent;
      continue;
    }
    if (!stats.isDirectory()) return `${path} is not a folder`;
    try {
      accessSync(path, constants.W_OK | constants.X_OK);
      return null;
    } catch {
      return `${path} is not writable by this user`;
    }
  }
}

/** realpath of the deepest existing ancestor, with the missing tail appended. */
function realPathOfExisting(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(realPathOfExisting(parent), basename(path));
  }
}

/**
 * Makes planport's own plans folder (and `~/.planport` above it) private again when an earlier
 * version left it open to other users (0755): created 0700, and narrowed to 0700 when it is this
 * user's and others may read it. A folder the user chose (`--plans-dir`) is left as it is.
 */
function keepPrivate(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const path of [dirname(dir), dir]) {
    const stats = statSync(path);
    if (stats.uid === process.getuid?.() && (stats.mode & 0o077) !== 0) chmodSync(path, 0o700);
  }
}

/**
 * A file-name slug from the session title, else the plan's first heading, else "plan".
 *
 * @example
 * planSlug("Add GitHub OAuth login!", "") // → "add-github-oauth-login"
 * planSlug(undefined, "# Ship the poller\n…") // → "ship-the-poller"
 */
export function planSlug(title: string | undefined, plan: string): string {
  const heading = /^#{1,6}\s+(.+)$/m.exec(plan)?.[1];
  for (const candidate of [title, heading]) {
    const slug = slugify(candidate ?? "");
    if (slug !== "") return slug;
  }
  return "plan";
}

function slugify(text: string): string {
  const words = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
  let slug = "";
  for (const word of words) {
    const next = slug === "" ? word : `${slug}-${word}`;
    if (next.length > MAX_SLUG_CHARS) break;
    slug = next;
  }
  return slug === "" ? (words[0]?.slice(0, MAX_SLUG_CHARS) ?? "") : slug;
}

/**
 * Writes the plan to `<dir>/<slug>.md`, or `<slug>-2.md`, `-3`… — never over an existing file
 * (it may be an earlier plan, or the user's own notes). Returns the path written.
 *
 * @example
 * writePlanFile("/home/me/.planport/plans", "add-oauth", "# Plan…") // → ".../add-oauth.md"
 */
export function writePlanFile(dir: string, slug: string, plan: string): string {
  // A plan can hold what the repository holds: only this user reads it (0700 / 0600), as
  // everything else planport keeps under the home.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let n = 1; ; n += 1) {
    const path = join(dir, n === 1 ? `${slug}.md` : `${slug}-${n}.md`);
    try {
      writeFileSync(path, plan.endsWith("\n") || plan === "" ? plan : `${plan}\n`, {
        flag: "wx",
        mode: 0o600,
      });
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/** What a hand-off command or preset is run with. */
export interface HandOffRun {
  plan: string;
  planFile: string;
  fresh: boolean;
  cwd: string;
  /** `stderr` keeps stdout for `--json` lines only. */
  output?: "inherit" | "stderr";
}

const stdoutOf = (opts: HandOffRun) => (opts.output === "stderr" ? process.stderr : "inherit");

/** The hand-off's environment: the plan file, and `1` for a fresh context (`0` = here). */
function handOffEnv(opts: HandOffRun): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PLANPORT_PLAN_FILE: opts.planFile,
    PLANPORT_FRESH_CONTEXT: opts.fresh ? "1" : "0",
  };
}

/**
 * Runs the user's hand-off command through the shell with the plan on stdin,
 * `PLANPORT_PLAN_FILE` and `PLANPORT_FRESH_CONTEXT` (`1` = start a new session, `0` = implement
 * in the current one) in its environment. Resolves with its exit code.
 *
 * @example
 * await runOnTeleport("claude -p", { plan, planFile, fresh: false, cwd: repo }) // → 0
 */
export async function runOnTeleport(command: string, opts: HandOffRun): Promise<number> {
  const child = spawn(command, {
    shell: true,
    cwd: opts.cwd,
    stdio: ["pipe", stdoutOf(opts), "inherit"],
    env: handOffEnv(opts),
  });
  // A command that does not read its stdin closes it early; that is its choice, not an error.
  child.stdin?.on("error", () => {});
  child.stdin?.end(opts.plan);
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  return code ?? (signal ? 128 : 1);
}

/**
 * The executable `binary` resolves to on PATH, or null: what decides that a preset's agent is
 * installed. Only a name without a slash is looked up (presets are bare names).
 *
 * @example
 * findOnPath("claude", process.env) // → "/usr/local/bin/claude" (or null)
 */
export function findOnPath(binary: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, binary);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here (or not executable): the next PATH entry.
    }
  }
  return null;
}

/**
 * Starts a preset's agent in this terminal (stdin and stderr inherited, so its TUI works)
 * with the plan as its first instruction — an argv array, never a shell string. Resolves with
 * its exit code. `executable` is the binary {@link findOnPath} found.
 *
 * @example
 * await runPreset("claude", "/usr/local/bin/claude", { plan, planFile, fresh: true, cwd: repo }) // → 0
 */
export async function runPreset(
  name: PresetName,
  executable: string,
  opts: HandOffRun,
): Promise<number> {
  const launch = presetLaunch(name, opts);
  const child = spawn(executable, launch.args, {
    cwd: opts.cwd,
    stdio: ["inherit", stdoutOf(opts), "inherit"],
    env: handOffEnv(opts),
  });
  const exit = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const failed = once(child, "error").then(([err]) => err as NodeJS.ErrnoException);
  const first = await Promise.race([exit, failed]);
  if (first instanceof Error) return first.code === "ENOENT" || first.code === "EACCES" ? 127 : 1;
  const [code, signal] = first;
  return code ?? (signal ? 128 : 1);
}

export interface HandOffOptions {
  plan: string;
  title?: string;
  repoRoot: string;
  plansDir?: string;
  /**
   * The shell command that carries the plan out, or a preset name (presets.ts); without one the
   * hand-off is "cancel".
   */
  onTeleport?: string;
  /** Asks the user (a TTY); absent = no terminal, so the command runs as "implement here". */
  choose?: (planFile: string) => Promise<TeleportChoice>;
  output?: "inherit" | "stderr";
  warn?: (message: string) => void;
  env?: NodeJS.ProcessEnv;
}

export interface HandOffResult {
  planFile: string;
  choice: TeleportChoice;
  /** The hand-off command's exit code; null when none ran. */
  commandExitCode: number | null;
  /** A preset whose agent is not installed: the sentence naming what to install (nothing ran). */
  notInstalled?: string;
}

/**
 * Step one: saves a teleported plan as `<plans-dir>/<slug>.md` and returns its path.
 *
 * @example
 * saveTeleportedPlan({ plan, title: "Add OAuth login", repoRoot: "/src/app" })
 * // → "~/.planport/plans/add-oauth-login.md" (or "…-2.md" when that exists)
 */
export function saveTeleportedPlan(
  opts: Pick<HandOffOptions, "plan" | "title" | "repoRoot" | "plansDir" | "warn" | "env">,
): string {
  const { dir, warning } = resolvePlansDir({
    requested: opts.plansDir,
    repoRoot: opts.repoRoot,
    env: opts.env,
  });
  if (warning) opts.warn?.(warning);
  if (dir === defaultPlansDir(opts.env)) keepPrivate(dir);
  const plan = readableText(opts.plan);
  return writePlanFile(dir, planSlug(opts.title, plan), plan);
}

/**
 * Step two: hands the saved plan over as the user chooses (or runs the command as "implement
 * here" without a terminal; does nothing — cancel — without a command).
 *
 * @example
 * await carryOutTeleport({ plan, planFile, repoRoot, onTeleport: undefined })
 * // → { choice: "cancel", commandExitCode: null }
 */
export async function carryOutTeleport(
  opts: Pick<HandOffOptions, "plan" | "repoRoot" | "onTeleport" | "choose" | "output" | "env"> & {
    planFile: string;
  },
): Promise<Omit<HandOffResult, "planFile">> {
  if (opts.onTeleport === undefined || opts.onTeleport.trim() === "") {
    return { choice: "cancel", commandExitCode: null };
  }
  const preset = presetName(opts.onTeleport);
  // Checked before asking: "implement here or start fresh?" means nothing for an agent that is
  // not there.
  const executable = preset ? findOnPath(presetBinary(preset), opts.env) : null;
  if (preset && executable === null) {
    return { choice: "cancel", commandExitCode: null, notInstalled: presetMissingText(preset) };
  }
  const choice = opts.choose ? await opts.choose(opts.planFile) : "implement";
  if (choice === "cancel") return { choice, commandExitCode: null };
  const run = {
    plan: readableText(opts.plan),
    planFile: opts.planFile,
    fresh: choice === "fresh",
    cwd: opts.repoRoot,
    output: opts.output,
  };
  const commandExitCode =
    preset && executable
      ? await runPreset(preset, executable, run)
      : await runOnTeleport(opts.onTeleport, run);
  return { choice, commandExitCode };
}

/**
 * Saves a teleported plan and hands it over: both steps.
 *
 * @example
 * await handOffTeleport({ plan, title: "Add OAuth login", repoRoot: "/src/app", onTeleport: "claude -p" })
 * // → { planFile: "~/.planport/plans/add-oauth-login.md", choice: "implement", commandExitCode: 0 }
 */
export async function handOffTeleport(opts: HandOffOptions): Promise<HandOffResult> {
  const planFile = saveTeleportedPlan(opts);
  return { planFile, ...(await carryOutTeleport({ ...opts, planFile })) };
}
