import { dirname } from "node:path";

/**
 * Hand-off presets: `--on-teleport claude|codex|gemini|aider|opencode` starts that agent in this
 * terminal with the teleported plan as its first instruction. Pure: the table of each agent's
 * own flags (read from its `--help`) and the argv built from it. teleport.ts finds the binary
 * and spawns it — with an argv array, never through a shell, so nothing in a plan is ever
 * parsed as shell syntax.
 */

export const PRESET_NAMES = ["claude", "codex", "gemini", "aider", "opencode"] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/**
 * The longest first instruction passed inline, in UTF-8 bytes. Linux refuses a single argument
 * over 128 KiB (MAX_ARG_STRLEN) with E2BIG, so a longer plan is not put in argv: the agent is
 * told to read the saved plan file instead (and, where the agent confines reads to its
 * workspace, given that file's folder). Inline is the default below this size because the
 * agent then has the whole plan in its first message, without a file read that may need a
 * permission outside the repository.
 */
export const MAX_INLINE_PROMPT_BYTES = 96 * 1024;

export interface PresetRequest {
  plan: string;
  /** The saved plan file (absolute). */
  planFile: string;
  /** "Start a new session" (fresh context) rather than "implement here". */
  fresh: boolean;
}

/** What to spawn: the binary's name (looked up on PATH) and its arguments. */
export interface PresetLaunch {
  command: string;
  args: string[];
  /** Whether the plan itself is in the arguments, or only a pointer to its file. */
  prompt: "inline" | "file";
}

interface PresetSpec {
  binary: string;
  /** How to install it, as the error for a missing agent says. */
  install: string;
  /** Arguments, given the first instruction and where the plan is. */
  args(p: { instruction: string; planFile: string; fresh: boolean; inline: boolean }): string[];
  /**
   * aider's first message is a separate read-only file it loads (`--read`), so its instruction
   * always points at the plan file and never carries the plan.
   */
  alwaysFile?: boolean;
}

/**
 * Each agent's real flags (from `--help` of @anthropic-ai/claude-code 2.1.328, @openai/codex
 * 0.169.0, @google/gemini-cli 0.61.0 and opencode-ai 1.18.33; aider-chat's documented
 * options). The codex and gemini argv are run with the real binaries in a terminal by
 * test/e2e/agent-presets.test.ts. "Implement here" continues the agent's most recent conversation in this directory
 * — the context the user planned from — and "start a new session" starts a fresh one.
 */
const PRESETS: Record<PresetName, PresetSpec> = {
  // `claude [prompt]` starts an interactive session with that prompt; `-c, --continue`
  // continues the most recent conversation in the current directory; `--add-dir` lets it read
  // the plans folder (outside the repository by default). `--` ends the options, and
  // `--add-dir` takes several values, so it must come before it.
  claude: {
    binary: "claude",
    install: "npm i -g @anthropic-ai/claude-code",
    args: ({ instruction, planFile, fresh, inline }) => [
      ...(fresh ? [] : ["--continue"]),
      ...(inline ? [] : ["--add-dir", dirname(planFile)]),
      "--",
      instruction,
    ],
  },
  // `codex [PROMPT]` starts the interactive TUI with that prompt; `codex resume --last
  // [PROMPT]` continues the most recent session. Codex reads outside its workspace by default
  // (its sandbox limits writes), so the plan file needs no extra flag.
  codex: {
    binary: "codex",
    install: "npm i -g @openai/codex",
    args: ({ instruction, fresh }) => (fresh ? [instruction] : ["resume", "--last", instruction]),
  },
  // `-i, --prompt-interactive` runs the prompt and stays interactive (`-p` would be headless);
  // `-r, --resume latest` resumes the most recent session; `--include-directories` adds the
  // plans folder to the workspace, to which gemini's file tools are confined.
  gemini: {
    binary: "gemini",
    install: "npm i -g @google/gemini-cli",
    args: ({ instruction, planFile, fresh, inline }) => [
      ...(fresh ? [] : ["--resume", "latest"]),
      ...(inline ? [] : ["--include-directories", dirname(planFile)]),
      "--prompt-interactive",
      instruction,
    ],
  },
  // aider (PyPI aider-chat): `--read FILE` puts the plan in the chat as a read-only file and
  // `--message` sends the instruction — aider then processes that one message and exits (its
  // documented behaviour for --message; it has no "first message, then stay in chat" flag).
  // `--restore-chat-history` continues the repository's previous chat for "implement here".
  aider: {
    binary: "aider",
    install: "pipx install aider-chat",
    alwaysFile: true,
    args: ({ instruction, planFile, fresh }) => [
      ...(fresh ? [] : ["--restore-chat-history"]),
      "--read",
      planFile,
      "--message",
      instruction,
    ],
  },
  // `opencode [project] --prompt TEXT` starts the TUI with that prompt (the project defaults to
  // the working directory); `-c, --continue` continues the last session. `opencode run` would
  // be non-interactive.
  opencode: {
    binary: "opencode",
    install: "npm i -g opencode-ai",
    args: ({ instruction, fresh }) => [...(fresh ? [] : ["--continue"]), "--prompt", instruction],
  },
};

/**
 * The preset an `--on-teleport` value names, or null when it is a shell command: only a bare
 * preset name (surrounding spaces allowed) is a preset; `claude -p` stays a shell command.
 *
 * @example
 * presetName(" codex ") // → "codex"
 * presetName("claude -p") // → null
 */
export function presetName(onTeleport: string): PresetName | null {
  const name = onTeleport.trim();
  return (PRESET_NAMES as readonly string[]).includes(name) ? (name as PresetName) : null;
}

/** The binary a preset runs, as looked up on PATH. */
export function presetBinary(name: PresetName): string {
  return PRESETS[name].binary;
}

/**
 * The sentence for a preset whose agent is not on PATH: what is missing and how to install it.
 *
 * @example
 * presetMissingText("aider") // → "aider is not installed (no `aider` on PATH). Install it with: pipx install aider-chat"
 */
export function presetMissingText(name: PresetName): string {
  const spec = PRESETS[name];
  return `${name} is not installed (no \`${spec.binary}\` on PATH). Install it with: ${spec.install}`;
}

/**
 * The agent's first instruction: the plan inline, or (too long for argv, or an agent that
 * reads it as a file) where the plan file is.
 *
 * @example
 * presetInstruction("# Plan\n1. …", "/p/plan.md", "inline")
 * // → "Implement the following plan, approved in planport (also saved at /p/plan.md):\n\n# Plan\n1. …"
 */
export function presetInstruction(
  plan: string,
  planFile: string,
  prompt: "inline" | "file",
): string {
  if (prompt === "file") {
    return `Implement the plan approved in planport. It is saved at ${planFile}: read that file first, then carry out the plan step by step.`;
  }
  return `Implement the following plan, approved in planport (also saved at ${planFile}):\n\n${plan}`;
}

/**
 * The command and arguments that start the preset's agent with the plan.
 *
 * @example
 * presetLaunch("claude", { plan, planFile: "/home/me/.planport/plans/x.md", fresh: true })
 * // → { command: "claude", args: ["--", "Implement the following plan…"], prompt: "inline" }
 */
export function presetLaunch(name: PresetName, req: PresetRequest): PresetLaunch {
  const spec = PRESETS[name];
  const inlineText = presetInstruction(req.plan, req.planFile, "inline");
  const fits = Buffer.byteLength(inlineText, "utf8") <= MAX_INLINE_PROMPT_BYTES;
  // A NUL cannot be passed in argv at all; such a plan goes by file.
  const inline = !spec.alwaysFile && fits && !inlineText.includes("\0");
  const prompt = inline ? "inline" : "file";
  const instruction = inline ? inlineText : presetInstruction(req.plan, req.planFile, "file");
  return {
    command: spec.binary,
    args: spec.args({ instruction, planFile: req.planFile, fresh: req.fresh, inline }),
    prompt,
  };
}
