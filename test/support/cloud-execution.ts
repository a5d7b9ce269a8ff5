import { execFileSync } from "node:child_process";
import type { Event, ScriptedTurn } from "../../src/protocol/index.ts";

/**
 * Shared by the cloud-execution tests (test/e2e/cloud-execution*.test.ts): a small Node project
 * whose test fails until one line is fixed, a script that plans, then — after approval — runs
 * its tests in the container, fixes the line, runs them again, and has a command write a file
 * that proves where it ran; and what Docker says of a session's containers.
 */

/** A project whose `npm test` fails (41, not 42) until src/answer.js is fixed. */
export function answerProject(marker: string): Record<string, string> {
  return {
    "package.json": `${JSON.stringify({ name: "answer", private: true, scripts: { test: "node --test" } }, null, 2)}\n`,
    "src/answer.js": "exports.answer = () => 41;\n",
    "test/answer.test.js":
      'const test = require("node:test");\nconst assert = require("node:assert");\nconst { answer } = require("../src/answer.js");\n\ntest("the answer", () => assert.strictEqual(answer(), 42));\n',
    // A value only the snapshot holds: a command that prints it ran over the snapshot's files.
    "marker.txt": `${marker}\n`,
    ".gitignore": "out/\n",
  };
}

export const PLAN = "# Plan\n\n1. Fix `src/answer.js` to return 42.\n2. Run `npm test`.\n";

/** The scripted model: a Bash try in plan mode (refused), the plan, then the execution. */
export function executionScript(extra: ScriptedTurn[] = []): ScriptedTurn[] {
  return [
    {
      content: [
        { type: "tool_use", name: "Bash", input: { command: "touch planned.txt" } },
        { type: "tool_use", name: "Write", input: { file_path: "$PLAN_PATH", content: PLAN } },
        { type: "tool_use", name: "ExitPlanMode", input: {} },
      ],
    },
    bash("npm test", "Run the tests"),
    {
      content: [
        {
          type: "tool_use",
          name: "Edit",
          input: { file_path: "src/answer.js", old_string: "41", new_string: "42" },
        },
      ],
    },
    bash("npm test", "Run the tests again"),
    bash(
      '{ echo "marker: $(cat marker.txt)"; echo "pwd: $(pwd)"; echo "host: $(hostname)"; } > ran-in.txt && mkdir -p out && echo ignored > out/build.txt && rm -f .gitignore.bak',
      "Record where the command ran",
    ),
    ...extra,
    { content: [{ type: "text", text: "Done: the answer is 42 and the tests pass." }] },
  ];
}

export function bash(command: string, description?: string, timeout?: number): ScriptedTurn {
  return {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: {
          command,
          ...(description !== undefined && { description }),
          ...(timeout !== undefined && { timeout }),
        },
      },
    ],
  };
}

/** Each tool call of the feed with its result, in order. */
export function toolCalls(events: readonly Event[]): {
  name: string;
  input: Record<string, unknown>;
  result: string;
  isError: boolean;
  denied: boolean;
}[] {
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  const out: ReturnType<typeof toolCalls> = [];
  for (const event of events) {
    const content = (event as { message?: { content?: unknown } }).message?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as Record<string, unknown>[]) {
      if (block.type === "tool_use") {
        calls.set(block.id as string, {
          name: block.name as string,
          input: block.input as Record<string, unknown>,
        });
      } else if (block.type === "tool_result") {
        const call = calls.get(block.tool_use_id as string);
        if (call === undefined) continue;
        out.push({
          ...call,
          result: typeof block.content === "string" ? block.content : JSON.stringify(block.content),
          isError: block.is_error === true,
          denied: (event as { permission_denied?: boolean }).permission_denied === true,
        });
      }
    }
  }
  return out;
}

/** The paths `git status` shows changed or new in `repo`, sorted. */
export function changedPaths(repo: string): string[] {
  return execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: repo,
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean)
    .map((line) => line.slice(3))
    .sort();
}

/** The ids of the containers Docker has (running or not) with this label value. */
export function containersLabelled(label: string, value: string): string[] {
  return execFileSync("docker", ["ps", "--all", "--quiet", "--filter", `label=${label}=${value}`], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
}
