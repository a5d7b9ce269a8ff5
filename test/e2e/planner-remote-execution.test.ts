import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../src/protocol/index.ts";
import {
  git,
  gitRepository,
  type PlanportWorker,
  settled,
  startPlanportWorker,
  uploadRepository,
} from "./planner-support.ts";

/**
 * Plan → approve → remote execution end to end: the worker runs in `wrangler dev`, the
 * repository is a real git checkout snapshotted by the client code, the scripted planner edits
 * existing files and creates new ones on the overlay, and the diff served by `/changes` must
 * pass `git apply --check` on a clone of the ORIGINAL tree and then reproduce the edits there
 * byte for byte.
 */

const ORIGINAL: Record<string, string> = {
  "README.md": "# Greeter\n\nSays hello.\n",
  "package.json": `${JSON.stringify({ name: "greeter", scripts: { test: "node --test" } }, null, 2)}\n`,
  "src/app.ts":
    'import { greet } from "./greet.js";\n\nexport function main(): void {\n  console.log(greet("world"));\n}\n',
  "src/greet.ts": 'export function greet(name: string): string {\n  return "Hello, " + name;\n}',
  "docs/release notes.md": "# Release notes\n\n## 0.1.0\n\n- Première version ✨\n",
  "scripts/build.bat": "@echo off\r\nnpm run build\r\n",
};

const PLAN = "# Plan\n\n1. Add a greeting flag.\n2. Note it in the release notes.\n";

const script: ScriptedTurn[] = [
  {
    content: [
      { type: "tool_use", name: "Read", input: { file_path: "src/app.ts" } },
      { type: "tool_use", name: "Write", input: { file_path: "$PLAN_PATH", content: PLAN } },
      { type: "tool_use", name: "ExitPlanMode", input: {} },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "Edit",
        input: {
          file_path: "src/app.ts",
          old_string: '  console.log(greet("world"));',
          new_string: '  if (FLAGS.greet) console.log(greet("world"));',
        },
      },
      {
        type: "tool_use",
        name: "Edit",
        input: {
          file_path: "src/app.ts",
          old_string: 'import { greet } from "./greet.js";',
          new_string:
            'import { FLAGS } from "./feature/flags.js";\nimport { greet } from "./greet.js";',
        },
      },
      {
        type: "tool_use",
        name: "Write",
        input: {
          file_path: "src/feature/flags.ts",
          content: "export const FLAGS = { greet: true };\n",
        },
      },
      {
        type: "tool_use",
        name: "Edit",
        input: { file_path: "/repo/src/greet.ts", old_string: "Hello", new_string: "Hi" },
      },
      {
        type: "tool_use",
        name: "Edit",
        input: {
          file_path: "docs/release notes.md",
          old_string: "## 0.1.0",
          new_string: "## 0.2.0\n\n- Greeting flag 🚩\n\n## 0.1.0",
        },
      },
      {
        type: "tool_use",
        name: "Edit",
        input: {
          file_path: "scripts/build.bat",
          old_string: "npm run build\r\n",
          new_string: "npm ci\r\nnpm run build\r\n",
        },
      },
      {
        type: "tool_use",
        name: "Write",
        input: { file_path: "README.md", content: "# Greeter\n\nSays hello, behind a flag.\n" },
      },
    ],
  },
  { content: [{ type: "text", text: "Done: the greeting is behind a flag." }] },
];

/** The tree after the edits, computed from the original independently of the worker. */
const EXPECTED: Record<string, string> = {
  ...ORIGINAL,
  "README.md": "# Greeter\n\nSays hello, behind a flag.\n",
  "src/app.ts":
    'import { FLAGS } from "./feature/flags.js";\nimport { greet } from "./greet.js";\n\nexport function main(): void {\n  if (FLAGS.greet) console.log(greet("world"));\n}\n',
  "src/feature/flags.ts": "export const FLAGS = { greet: true };\n",
  "src/greet.ts": 'export function greet(name: string): string {\n  return "Hi, " + name;\n}',
  "docs/release notes.md":
    "# Release notes\n\n## 0.2.0\n\n- Greeting flag 🚩\n\n## 0.1.0\n\n- Première version ✨\n",
  "scripts/build.bat": "@echo off\r\nnpm ci\r\nnpm run build\r\n",
};

let pp: PlanportWorker;
const cleanup: string[] = [];

beforeAll(async () => {
  pp = await startPlanportWorker({
    PLANPORT_ALLOW_SCRIPTED: "true",
    PLANPORT_EXECUTION: "overlay",
  });
}, 120_000);

afterAll(async () => {
  await pp?.close();
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe("remote execution under wrangler dev", () => {
  it("serves a diff that git apply --check accepts on the original tree and that reproduces every edit", async () => {
    const repo = gitRepository(ORIGINAL);
    cleanup.push(repo);
    const snapshot = await uploadRepository(pp.client, repo);
    expect(snapshot.files).toBe(Object.keys(ORIGINAL).length);

    const created = await pp.client.createSession({
      prompt: "Put the greeting behind a feature flag",
      planner: "scripted",
      script,
      snapshot_id: snapshot.id,
    });
    const review = await settled(pp, created.id);
    expect(review.phase).toBe("plan_ready");
    expect(await pp.client.changes(created.id)).toBe("");
    await pp.client.decide(created.id, {
      tool_use_id: review.pending!.tool_use_id,
      decision: "approve",
    });
    const done = await settled(pp, created.id);
    expect(done).toMatchObject({ status: "idle", phase: "done", outcome: { kind: "approved" } });

    const diff = await pp.client.changes(created.id);
    const patch = join(tmpdir(), `planport-${created.id}.diff`);
    cleanup.push(patch);
    writeFileSync(patch, diff);

    const checkout = join(tmpdir(), `planport-checkout-${created.id}`);
    cleanup.push(checkout);
    git(tmpdir(), "clone", "--quiet", "--config", "core.autocrlf=false", repo, checkout);
    git(checkout, "apply", "--check", "--verbose", patch);
    git(checkout, "apply", patch);

    for (const [path, content] of Object.entries(EXPECTED)) {
      expect(readFileSync(join(checkout, path), "utf8"), path).toBe(content);
    }
    const status = git(checkout, "status", "--porcelain", "--untracked-files=all")
      .split("\n")
      .filter(Boolean)
      .sort();
    expect(status).toEqual([
      ' M "docs/release notes.md"',
      " M README.md",
      " M scripts/build.bat",
      " M src/app.ts",
      " M src/greet.ts",
      "?? src/feature/flags.ts",
    ]);
    // The unchanged file stays out of the diff.
    expect(diff).not.toContain("package.json");
  }, 120_000);
});
