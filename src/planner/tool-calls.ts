import type { ToolUseBlock } from "../protocol/index.ts";
import type { EngineState } from "./engine-state.ts";
import { decidePermission } from "./permissions.ts";
import type { SessionPort } from "./port.ts";
import { findTool, type ToolOutcome, Workspace } from "./tools/index.ts";
import { toolResultEvent } from "./turns.ts";

const WAIT_TOOLS = new Set(["AskUserQuestion", "ExitPlanMode"]);

/**
 * Runs tool calls in order, each through the permission check, and persists each one's effect
 * together with its tool result in one transaction (a restart re-runs only calls without a
 * result, so no effect happens twice). A question or plan review opens a wait instead of
 * answering; only one wait can be open, so a second wait call in the same reply is refused.
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
  let current = state;
  for (const call of calls) {
    const mode = port.permissionMode();
    const outcome = await outcomeOf(port, workspace, call, mode, planPath);
    if (outcome.kind === "wait") {
      const next: EngineState = { ...current, openedWaits: [...current.openedWaits, call.id] };
      port.transaction(() => {
        port.openWait({ kind: outcome.wait.kind, tool_use_id: call.id, input: outcome.wait.input });
        port.saveEngineState(next);
      });
      current = next;
      continue;
    }
    port.transaction(() => {
      outcome.apply?.();
      port.appendEvents([
        toolResultEvent({
          type: "tool_result",
          tool_use_id: call.id,
          content: outcome.content,
          is_error: outcome.isError,
        }),
      ]);
    });
  }
  return current;
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
