/// <reference types="vite/client" />
import { type StepOptions, step } from "../../../src/planner/loop.ts";
import { scriptedPlanner } from "../../../src/planner/models/scripted.ts";
import type { ModelRequest, ModelTurn, Planner } from "../../../src/planner/models/types.ts";
import { decidePermission } from "../../../src/planner/permissions.ts";
import type { PlannerEnv, StepResult } from "../../../src/planner/port.ts";
import { findTool, type ToolOutcome, Workspace } from "../../../src/planner/tools/index.ts";
import type { Event, PermissionMode, ScriptedTurn, ToolName } from "../../../src/protocol/index.ts";
import { MemoryPort } from "../../support/memory-port.ts";

const shopFiles = import.meta.glob("../../fixtures/shop/**/*", {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

const pyappFiles = import.meta.glob("../../fixtures/pyapp/**/*", {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

function relative(files: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([k, v]) => [k.slice(prefix.length), v]));
}

/** The `shop` fixture repository (TypeScript) as path → text, paths relative to its root. */
export function shopFixture(): Record<string, string> {
  return relative(shopFiles, "../../fixtures/shop/");
}

/** The `pyapp` fixture repository (Python, pytest) as path → text. */
export function pyappFixture(): Record<string, string> {
  return relative(pyappFiles, "../../fixtures/pyapp/");
}

/** Wraps a planner to record every request it gets (a spy, not a double: the real planner answers). */
export function recording(planner: Planner): Planner & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    name: planner.name,
    canExecuteRemotely: planner.canExecuteRemotely,
    requests,
    async next(request: ModelRequest): Promise<ModelTurn> {
      requests.push(structuredClone({ ...request, signal: undefined }));
      return planner.next(request);
    },
  };
}

/** Steps like the session's alarm does until the loop stops (wait or idle). */
export async function runUntilStopped(
  port: MemoryPort,
  options: StepOptions,
  maxSteps = 60,
  env: PlannerEnv = {},
): Promise<StepResult> {
  for (let i = 0; i < maxSteps; i++) {
    const result = await step(port, env, options);
    if (result.next !== "continue") return result;
  }
  throw new Error(`the loop did not stop within ${maxSteps} steps`);
}

export const FAST_RETRY: StepOptions["retry"] = {
  minDelayMs: 1,
  maxDelayMs: 5,
  maxRetryAfterMs: 50,
};

export function assistantEvents(events: readonly Event[]) {
  return events.filter((e) => e.type === "assistant");
}

export function toolResultsOf(events: readonly Event[]) {
  return events.flatMap((e) =>
    e.type === "user" && typeof e.message.content !== "string"
      ? e.message.content.filter((b) => b.type === "tool_result")
      : [],
  );
}

export const PLAN_PATH = "/plans/bold-eagle.md";

/** A scripted tool call (no id: the scripted planner assigns a stable one). */
export const tool = (name: string, input: Record<string, unknown>, id?: string) => ({
  type: "tool_use" as const,
  name,
  input,
  ...(id && { id }),
});
export const text = (t: string) => ({ type: "text" as const, text: t });
export const turn = (...content: ScriptedTurn["content"]): ScriptedTurn => ({
  content,
  usage: { input_tokens: 10, output_tokens: 5 },
});

/** A session on the shop fixture driven by the scripted planner, with its requests recorded. */
export function scriptedSession(script: ScriptedTurn[], facts: Partial<MemoryPort["facts"]> = {}) {
  const port = new MemoryPort({
    files: shopFixture(),
    facts: { planner: "scripted", script, ...facts },
  });
  const planner = recording(scriptedPlanner(script));
  return { port, planner, opts: { planner, retry: FAST_RETRY } };
}

/** Runs one tool the way the loop does: permission check first, then the tool, then its effect. */
export async function runTool(
  port: MemoryPort,
  name: ToolName,
  input: Record<string, unknown>,
  mode: PermissionMode = "plan",
): Promise<{ text: string; isError: boolean; outcome: ToolOutcome }> {
  const permission = decidePermission({ mode, tool: name, input, planPath: PLAN_PATH });
  if (permission.behavior === "deny") {
    return {
      text: permission.reason,
      isError: true,
      outcome: { kind: "result", content: permission.reason, isError: true },
    };
  }
  const outcome = await findTool(name)!.run(input, {
    port,
    workspace: new Workspace(port, PLAN_PATH),
    mode,
    planPath: PLAN_PATH,
    target: permission.target,
  });
  if (outcome.kind === "result") {
    outcome.apply?.();
    return { text: outcome.content, isError: outcome.isError, outcome };
  }
  return { text: "", isError: false, outcome };
}
