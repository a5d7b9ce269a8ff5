import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { defaultPlansDir } from "./home.ts";

/**
 * What a teleport does on this machine: the plan sent back from the browser is saved as a plan
 * file and handed to whatever carries it out here (an agent CLI, an editor, a script). No
 * terminal I/O of its own: the CLI (cli/handoff.ts) asks the user and reports.
 */

/** implement here · start a new session (fresh context) · cancel (keep the file). */
export type TeleportChoice = "implement" | "fresh" | "cancel";

const MAX_SLUG_CHARS = 60;

/**
 * The folder plan files go to. A `--plans-dir` that resolves outside the repository is refused
 * (with a warning, falling back to the default): a plan file is written by a remote session's
 * output, so where it lands must stay where the user expects — this checkout or `~/.planport`.
 * Symlinks are resolved first, so a link inside the repository cannot point the write elsewhere.
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
  mkdirSync(dir, { recursive: true });
  for (let n = 1; ; n += 1) {
    const path = join(dir, n === 1 ? `${slug}.md` : `${slug}-${n}.md`);
    try {
      writeFileSync(path, plan.endsWith("\n") || plan === "" ? plan : `${plan}\n`, { flag: "wx" });
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/**
 * Runs the user's hand-off command through the shell with the plan on stdin,
 * `PLANPORT_PLAN_FILE` and `PLANPORT_FRESH_CONTEXT` (`1` = start a new session, `0` = implement
 * in the current one) in its environment. Resolves with its exit code.
 *
 * @example
 * await runOnTeleport("claude -p", { plan, planFile, fresh: false, cwd: repo }) // → 0
 */
export async function runOnTeleport(
  command: string,
  opts: {
    plan: string;
    planFile: string;
    fresh: boolean;
    cwd: string;
    /** `stderr` keeps stdout for `--json` lines only. */
    output?: "inherit" | "stderr";
  },
): Promise<number> {
  const child = spawn(command, {
    shell: true,
    cwd: opts.cwd,
    stdio: ["pipe", opts.output === "stderr" ? process.stderr : "inherit", "inherit"],
    env: {
      ...process.env,
      PLANPORT_PLAN_FILE: opts.planFile,
      PLANPORT_FRESH_CONTEXT: opts.fresh ? "1" : "0",
    },
  });
  // A command that does not read its stdin closes it early; that is its choice, not an error.
  child.stdin?.on("error", () => {});
  child.stdin?.end(opts.plan);
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  return code ?? (signal ? 128 : 1);
}

export interface HandOffOptions {
  plan: string;
  title?: string;
  repoRoot: string;
  plansDir?: string;
  /** The shell command that carries the plan out; without one the hand-off is "cancel". */
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
  return writePlanFile(dir, planSlug(opts.title, opts.plan), opts.plan);
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
  opts: Pick<HandOffOptions, "plan" | "repoRoot" | "onTeleport" | "choose" | "output"> & {
    planFile: string;
  },
): Promise<Omit<HandOffResult, "planFile">> {
  if (opts.onTeleport === undefined || opts.onTeleport.trim() === "") {
    return { choice: "cancel", commandExitCode: null };
  }
  const choice = opts.choose ? await opts.choose(opts.planFile) : "implement";
  if (choice === "cancel") return { choice, commandExitCode: null };
  const commandExitCode = await runOnTeleport(opts.onTeleport, {
    plan: opts.plan,
    planFile: opts.planFile,
    fresh: choice === "fresh",
    cwd: opts.repoRoot,
    output: opts.output,
  });
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
