import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  MAX_INLINE_PROMPT_BYTES,
  PRESET_NAMES,
  presetBinary,
  presetInstruction,
  presetLaunch,
  presetMissingText,
  presetName,
} from "../../../local-client/handoff/presets.ts";
import { carryOutTeleport, findOnPath } from "../../../local-client/handoff/teleport.ts";

const planFile = "/home/me/.planport/plans/add-oauth.md";
const plan = "# Add OAuth\n\n1. Add the route\n2. Test it\n";

describe("presetName", () => {
  it("a bare preset name (spaces around allowed) is a preset", () => {
    for (const name of PRESET_NAMES) {
      expect(presetName(name)).toBe(name);
      expect(presetName(`  ${name}\n`)).toBe(name);
    }
  });

  it("anything else stays a shell command", () => {
    for (const command of [
      "claude -p",
      "Claude",
      "cat > plan.md",
      "",
      "codex;",
      "./claude",
      "aider-chat",
    ]) {
      expect(presetName(command)).toBeNull();
    }
  });
});

describe("presetLaunch", () => {
  const inline = (name: (typeof PRESET_NAMES)[number], fresh: boolean) =>
    presetLaunch(name, { plan, planFile, fresh });
  const text = presetInstruction(plan, planFile, "inline");

  it("claude: the plan as the interactive prompt after --, --continue for implement here", () => {
    expect(inline("claude", true)).toEqual({
      command: "claude",
      args: ["--", text],
      prompt: "inline",
    });
    expect(inline("claude", false).args).toEqual(["--continue", "--", text]);
  });

  it("codex: the plan as the TUI prompt, resume --last for implement here", () => {
    expect(inline("codex", true)).toEqual({ command: "codex", args: [text], prompt: "inline" });
    expect(inline("codex", false).args).toEqual(["resume", "--last", text]);
  });

  it("gemini: --prompt-interactive (stays interactive), --resume latest for implement here", () => {
    expect(inline("gemini", true).args).toEqual(["--prompt-interactive", text]);
    expect(inline("gemini", false).args).toEqual([
      "--resume",
      "latest",
      "--prompt-interactive",
      text,
    ]);
  });

  it("opencode: the TUI with --prompt, --continue for implement here", () => {
    expect(inline("opencode", true).args).toEqual(["--prompt", text]);
    expect(inline("opencode", false).args).toEqual(["--continue", "--prompt", text]);
  });

  it("aider: the plan file --read and a --message pointing at it; --restore-chat-history for implement here", () => {
    const fileText = presetInstruction(plan, planFile, "file");
    expect(inline("aider", true)).toEqual({
      command: "aider",
      args: ["--read", planFile, "--message", fileText],
      prompt: "file",
    });
    expect(inline("aider", false).args).toEqual([
      "--restore-chat-history",
      "--read",
      planFile,
      "--message",
      fileText,
    ]);
  });

  it("the inline instruction carries the whole plan and names its file", () => {
    expect(text).toContain(plan);
    expect(text).toContain(planFile);
  });

  it("a plan too long for one argument is passed as its file, with read access where the agent confines reads", () => {
    const long = `# Big\n\n${"x".repeat(MAX_INLINE_PROMPT_BYTES)}`;
    const fileText = presetInstruction(long, planFile, "file");
    const dir = "/home/me/.planport/plans";
    const claude = presetLaunch("claude", { plan: long, planFile, fresh: true });
    expect(claude).toEqual({
      command: "claude",
      args: ["--add-dir", dir, "--", fileText],
      prompt: "file",
    });
    expect(presetLaunch("gemini", { plan: long, planFile, fresh: false }).args).toEqual([
      "--resume",
      "latest",
      "--include-directories",
      dir,
      "--prompt-interactive",
      fileText,
    ]);
    expect(presetLaunch("codex", { plan: long, planFile, fresh: true }).args).toEqual([fileText]);
    expect(presetLaunch("opencode", { plan: long, planFile, fresh: true }).args).toEqual([
      "--prompt",
      fileText,
    ]);
    for (const name of PRESET_NAMES) {
      const launch = presetLaunch(name, { plan: long, planFile, fresh: true });
      expect(launch.prompt).toBe("file");
      for (const arg of launch.args) {
        expect(Buffer.byteLength(arg)).toBeLessThanOrEqual(MAX_INLINE_PROMPT_BYTES);
      }
    }
  });

  it("the limit counts UTF-8 bytes, not characters", () => {
    // 3 bytes each: fewer characters than the limit, more bytes.
    const wide = "€".repeat(Math.ceil(MAX_INLINE_PROMPT_BYTES / 3));
    expect(wide.length).toBeLessThan(MAX_INLINE_PROMPT_BYTES);
    expect(presetLaunch("claude", { plan: wide, planFile, fresh: true }).prompt).toBe("file");
  });

  it("a plan just within the limit stays inline", () => {
    const overhead = Buffer.byteLength(presetInstruction("", planFile, "inline"));
    const fits = "y".repeat(MAX_INLINE_PROMPT_BYTES - overhead);
    expect(presetLaunch("codex", { plan: fits, planFile, fresh: true }).prompt).toBe("inline");
    expect(presetLaunch("codex", { plan: `${fits}y`, planFile, fresh: true }).prompt).toBe("file");
  });

  it("a plan with a NUL (argv cannot carry one) goes by file", () => {
    expect(presetLaunch("claude", { plan: "a\0b", planFile, fresh: true }).prompt).toBe("file");
  });

  it("a plan that looks like flags stays one argument after the options", () => {
    const launch = presetLaunch("claude", {
      plan: "--dangerously-skip-permissions",
      planFile,
      fresh: true,
    });
    expect(launch.args).toHaveLength(2);
    expect(launch.args[0]).toBe("--");
    expect(launch.args[1]?.startsWith("Implement")).toBe(true);
  });
});

describe("presetMissingText", () => {
  it("names the binary and the package to install", () => {
    expect(presetMissingText("claude")).toContain("npm i -g @anthropic-ai/claude-code");
    expect(presetMissingText("codex")).toContain("npm i -g @openai/codex");
    expect(presetMissingText("gemini")).toContain("npm i -g @google/gemini-cli");
    expect(presetMissingText("opencode")).toContain("npm i -g opencode-ai");
    expect(presetMissingText("aider")).toContain("pipx install aider-chat");
    for (const name of PRESET_NAMES) {
      expect(presetMissingText(name)).toContain(`\`${presetBinary(name)}\``);
    }
  });
});

describe("a preset on this machine (teleport.ts)", () => {
  it("findOnPath finds an executable on PATH, not a plain file or a folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-path-"));
    writeFileSync(join(dir, "codex"), "#!/bin/sh\n");
    chmodSync(join(dir, "codex"), 0o755);
    writeFileSync(join(dir, "gemini"), "not executable");
    mkdirSync(join(dir, "claude"));
    const env = { PATH: `/nonexistent${delimiter}${dir}` };
    expect(findOnPath("codex", env)).toBe(join(dir, "codex"));
    expect(findOnPath("gemini", env)).toBeNull();
    expect(findOnPath("claude", env)).toBeNull();
    expect(findOnPath("codex", {})).toBeNull();
  });

  it("a preset that is not installed is reported before asking, and nothing runs", async () => {
    const empty = mkdtempSync(join(tmpdir(), "planport-path-"));
    let asked = false;
    const result = await carryOutTeleport({
      plan,
      planFile,
      repoRoot: empty,
      onTeleport: " aider ",
      env: { PATH: empty },
      choose: async () => {
        asked = true;
        return "implement";
      },
    });
    expect(asked).toBe(false);
    expect(result).toEqual({
      choice: "cancel",
      commandExitCode: null,
      notInstalled: presetMissingText("aider"),
    });
  });
});
