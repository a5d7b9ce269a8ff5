import type { ToolUseBlock } from "../protocol/index.ts";
import type { EngineState } from "./engine-state.ts";
import { decidePermission } from "./permissions.ts";
import type { SessionPort } from "./port.ts";
import { findTool, type ToolOutcome, Workspace } from "./tools/index.ts";
import { yieldToEventLoop } from "./tools/scan-budget.ts";
import { toolResultEvent } from "./turns.ts";

const WAIT_TOOLS = new Set(["AskUserQuestion", "ExitPlanMode"]);

/**
 * Times a tool call is started before the engine gives up on it. A start that never produced
 * a result means the session died while the call ran (a crash, a restart, a runtime that
 * killed a stuck isolate); one retry covers an unlucky restart, and a call that dies twice is
 * answered with an error rather than re-run by every alarm forever.
 */
export const MAX_TOOL_ATTEMPTS = 2;

/**
 * Runs tool calls in order, each through the permission check, and persists each one's effect
 * together with its tool result in one transaction (a restart re-runs only calls without a
 * result, so no effect happens twice). Each start is recorded before the call runs, so a call
 * interrupted {@link MAX_TOOL_ATTEMPTS} times ends as an error result instead. A question or
 * plan review opens a wait instead of answering; only one wait can be open, so a second wait
 * call in the same reply is refused.
 *
 * @example
 * state = await runToolCalls(port, state, toolUses(assistantEvent));
 */
export async function runToolCalls(
  port: SessionPort,
  state: EngineState,
  calls: readonly ToolUseBlock[],
): Promise<EngineState> {
  const planPath = port.facts.planPath;
  const workspace = new Workspace(port, planPath);
  const batch = new Set(calls.map((c) => c.id));
  let current = state;
  for (const call of calls) {
    const attempts = current.toolAttempts[call.id] ?? 0;
    let outcome: ToolOutcome;
    if (attempts >= MAX_TOOL_ATTEMPTS) outcome = notFinished(call, attempts);
    else {
      current = recordStart(current, call.id, batch);
      const started = current;
      port.transaction(() => port.saveEngineState(started));
      // Let the runtime commit that write before the call runs: a call that then hangs the
      // isolate must not take its own start record down with it.
      await yieldToEventLoop();
      const mode = port.permissionMode();
      outcome = await outcomeOf(port, workspace, call, mode, planPath);
    }
    if (outcome.kind === "wait") {
      const next: EngineState = { ...current, openedWaits: [...current.openedWaits, call.id] };
      const wait = outcome.wait;
      port.transaction(() => {
        port.openWait({ kind: wait.kind, tool_use_id: call.id, input: wait.input });
        port.saveEngineState(next);
      });
      current = next;
      continue;
    }
    const result = outcome;
    port.transaction(() => {
      result.apply?.();
      port.appendEvents([
        toolResultEvent({
          type: "tool_result",
          tool_use_id: call.id,
          content: result.content,
          is_error: result.isError,
        }),
      ]);
    });
  }
  return current;
}

/**
 * The state with one more start of `id`. Only calls of the current batch are kept: the calls
 * of earlier replies have their results (or waits), so their counts are no longer facts anyone
 * needs.
 */
function recordStart(state: EngineState, id: string, batch: ReadonlySet<string>): EngineState {
  const kept = Object.entries(state.toolAttempts).filter(([callId]) => batch.has(callId));
  return {
    ...state,
    toolAttempts: { ...Object.fromEntries(kept), [id]: (state.toolAttempts[id] ?? 0) + 1 },
  };
}

/** The answer to a call that was started and interrupted too often to try again. */
function notFinished(call: ToolUseBlock, attempts: number): ToolOutcome {
  return {
    kind: "result",
    content: `${call.name} did not finish: it was started ${attempts} times, and each time the session was interrupted (the worker restarted or stopped) before the call answered, so it was not run again. Try a narrower call (a path or glob, a simpler pattern) or another way to find what you need.`,
    isError: true,
  };
}

async function outcomeOf(
  port: SessionPort,
  workspace: Workspace,
  call: ToolUseBlock,
  mode: ReturnType<SessionPort["permissionMode"]>,
  planPath: string,
): Promise<ToolOutcome> {
  const permission = decidePermission({ mode, tool: call.name, input: call.input, planPath });
  if (permission.behavior === "deny") {
    return { kind: "result", content: `Permission denied: ${permission.reason}`, isError: true };
  }
  const tool = findTool(call.name);
  if (tool === undefined)
    return { kind: "result", content: `There is no tool named "${call.name}".`, isError: true };
  if (WAIT_TOOLS.has(call.name) && port.pendingWait() !== null) {
    return {
      kind: "result",
      content: `${call.name} did not run: another question or plan review is already waiting for the user. Call it again after that one is answered.`,
      isError: true,
    };
  }
  try {
    return await tool.run(call.input, {
      port,
      workspace,
      mode,
      planPath,
      target: permission.target,
    });
  } catch (error) {
    // A tool that breaks (a storage hiccup, a bug) must not wedge the session: the model hears
    // what happened and can try again or work around it.
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "result", content: `${call.name} failed: ${message}`, isError: true };
  }
}
