import {
  BASH_TOOL,
  DEEP_TOOL_NAMES,
  type PermissionMode,
  READ_ONLY_TOOLS,
  TASK_TOOL,
  TOOL_NAMES,
  unsafeRepoName,
  WAIT_TOOLS,
  WRITE_TOOLS,
} from "../protocol/index.ts";
import { PLANS_DIR, parseRepoPath, REPO_ROOT } from "./paths.ts";

/**
 * The permission check every tool call passes before it runs. One pure function, so the rule
 * that makes plan mode read-only is enforcement rather than wording: whatever the model (or
 * prompt-injected repository content) says, a call it denies changes nothing and the model sees
 * the reason as an error tool result.
 *
 * - Read-only tools (Read, Glob, Grep, LS) are allowed in every mode.
 * - AskUserQuestion and ExitPlanMode change no file; they are allowed (ExitPlanMode itself
 *   refuses to run outside plan mode).
 * - In plan mode, Write/Edit are allowed only on this session's plan file, spelled exactly.
 * - After approval (any other mode), Write/Edit go to repository paths (the overlay); the plan
 *   file and the plans folder are then read-only (the approved plan is the contract), and so is
 *   `.git/` in any spelling; names the user's tools would misread (a leading `:` or `-`, a
 *   trailing dot or space: `unsafeRepoName` in src/protocol/repo-names.ts) are never written. `..`, odd spellings and
 *   absolute paths outside `/repo` are refused in every mode.
 * - `Task` (start a subagent) is allowed only where the session offers it (`deep`).
 * - A subagent (the conversation a `Task` call runs) may only look: read-only tools are
 *   allowed, and everything else — Write and Edit (the plan file included), AskUserQuestion,
 *   ExitPlanMode and Task — is denied, in every mode.
 * - Anything else — unknown tools, malformed input, unexpected fields on a write — is denied.
 */

/** The fields each write tool may carry; anything else is refused (it could mean a second target). */
const WRITE_TOOL_FIELDS: Record<(typeof WRITE_TOOLS)[number], readonly string[]> = {
  Write: ["file_path", "content"],
  Edit: ["file_path", "old_string", "new_string", "replace_all"],
};

/** What a permitted write may touch: the plan file, or one repository path in the overlay. */
export type WriteTarget = { kind: "plan" } | { kind: "repo"; path: string };

export type PermissionDecision =
  | { behavior: "allow"; target?: WriteTarget }
  | { behavior: "deny"; reason: string };

/** Who makes a call: the session's own agent, or a subagent a `Task` call started. */
export type Agent = "main" | "subagent";

export interface ToolCallRequest {
  mode: PermissionMode;
  tool: string;
  input: unknown;
  /** This session's plan file, e.g. `/plans/bold-eagle.md`. */
  planPath: string;
  /** Who calls; the session's own agent when absent. */
  agent?: Agent;
  /** Whether the session offers `Task` (the `deep` variant); false when absent. */
  offersTask?: boolean;
  /** Whether the session can run commands after approval (`Bash`); false when absent. */
  runsCommands?: boolean;
}

/**
 * Decides one tool call.
 *
 * @example
 * decidePermission({ mode: "plan", tool: "Write", input: { file_path: "/plans/bold-eagle.md", content: "# Plan" }, planPath: "/plans/bold-eagle.md" })
 * // { behavior: "allow", target: { kind: "plan" } }
 * decidePermission({ mode: "plan", tool: "Write", input: { file_path: "src/app.ts", content: "" }, planPath: "/plans/bold-eagle.md" })
 * // { behavior: "deny", reason: "Plan mode is active: …" }
 */
export function decidePermission(call: ToolCallRequest): PermissionDecision {
  if (call.agent === "subagent") return decideForSubagent(call.tool, call.input);
  const { tool } = call;
  if (tool === BASH_TOOL) return decideBash(call);
  const offersTask = call.offersTask === true;
  if (
    isOneOf(READ_ONLY_TOOLS, tool) ||
    isOneOf(WAIT_TOOLS, tool) ||
    (offersTask && tool === TASK_TOOL)
  ) {
    return isPlainObject(call.input)
      ? { behavior: "allow" }
      : deny(`The input of ${tool} must be a JSON object.`);
  }
  if (!isOneOf(WRITE_TOOLS, tool)) {
    const offered = offersTask ? DEEP_TOOL_NAMES : TOOL_NAMES;
    return deny(`There is no tool named "${tool}". Use one of: ${offered.join(", ")}.`);
  }
  return decideWrite(call.mode, tool, call.input, call.planPath);
}

/**
 * `Bash` runs only after approval, and only where commands can run. Plan mode's refusal says
 * why, so a model that tries learns to put the command into the plan instead.
 */
function decideBash(call: ToolCallRequest): PermissionDecision {
  if (call.mode === "plan") {
    return deny(
      "Plan mode is active: Bash is not available while planning, nothing was run. Use Read, Grep, Glob and LS to look at the repository, and name the commands to run (tests, builds) in the plan's verification steps; they run after the user approves.",
    );
  }
  if (call.runsCommands !== true) {
    return deny(
      "Bash is not available in this session: this deployment carries out plans without running commands (PLANPORT_EXECUTION=overlay). Use Read, Grep, Glob, Edit and Write.",
    );
  }
  return isPlainObject(call.input)
    ? { behavior: "allow" }
    : deny(`The input of ${BASH_TOOL} must be a JSON object.`);
}

/**
 * A subagent only looks. Its denials say why, so a model that tries anyway learns to report
 * what it found instead.
 */
function decideForSubagent(tool: string, input: unknown): PermissionDecision {
  if (isOneOf(READ_ONLY_TOOLS, tool)) {
    return isPlainObject(input)
      ? { behavior: "allow" }
      : deny(`The input of ${tool} must be a JSON object.`);
  }
  if (isOneOf(WRITE_TOOLS, tool)) {
    return deny(
      `A subagent is read-only: it cannot write or edit any file, not even the plan file. Nothing was changed. Put what should change into your report; the planning agent writes the plan.`,
    );
  }
  if (isOneOf(WAIT_TOOLS, tool)) {
    return deny(
      `A subagent cannot ${tool === "ExitPlanMode" ? "present the plan for review" : "ask the user questions"}: only the planning agent talks to the user. Put the open question into your report.`,
    );
  }
  if (tool === TASK_TOOL) {
    return deny(
      "A subagent cannot start subagents. Do the research yourself with the read-only tools.",
    );
  }
  return deny(
    `There is no tool named "${tool}". A subagent can use: ${READ_ONLY_TOOLS.join(", ")}.`,
  );
}

function decideWrite(
  mode: PermissionMode,
  tool: (typeof WRITE_TOOLS)[number],
  input: unknown,
  planPath: string,
): PermissionDecision {
  if (!isPlainObject(input)) return deny(`The input of ${tool} must be a JSON object.`);
  const extra = Object.keys(input).filter((k) => !WRITE_TOOL_FIELDS[tool].includes(k));
  if (extra.length > 0) {
    return deny(
      `${tool} does not accept the field(s) ${extra.map((k) => `"${k}"`).join(", ")}; nothing was written.`,
    );
  }
  const filePath = input.file_path;
  if (typeof filePath !== "string") {
    return deny(`${tool} needs "file_path" as a string; nothing was written.`);
  }

  if (mode === "plan") {
    if (filePath === planPath) return { behavior: "allow", target: { kind: "plan" } };
    return deny(
      `Plan mode is active: the only file you may write or edit is the plan file ${planPath} (spelled exactly like that). ${quotePath(filePath)} was not changed. Describe the change in the plan instead; it is carried out only after the user approves the plan.`,
    );
  }

  if (filePath === planPath || filePath === PLANS_DIR || filePath.startsWith(`${PLANS_DIR}/`)) {
    return deny(
      `The plan was approved and is now read-only: implement it in the repository (paths under ${REPO_ROOT}/) instead of changing ${quotePath(filePath)}.`,
    );
  }
  const parsed = parseRepoPath(filePath);
  if (!parsed.ok) return deny(`${parsed.error} Nothing was written.`);
  const unsafe = unsafeRepoName(parsed.value);
  if (unsafe !== null) {
    return deny(
      `${quotePath(parsed.value)} is not a name repository files may have: ${unsafe}. Nothing was written.`,
    );
  }
  return { behavior: "allow", target: { kind: "repo", path: parsed.value } };
}

function deny(reason: string): PermissionDecision {
  return { behavior: "deny", reason };
}

/** Shows a path in a denial without letting control characters through to the feed. */
function quotePath(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}

function isOneOf<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

/**
 * True for a JSON object (not null, not an array).
 *
 * @example
 * isPlainObject({}) // true
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
