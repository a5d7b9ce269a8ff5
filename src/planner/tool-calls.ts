import { type Event, type NewEvent, type ToolUseBlock, WAIT_TOOLS } from "../protocol/index.ts";
import type { EngineCell, EngineState } from "./engine-state.ts";
import { type Agent, decidePermission } from "./permissions.ts";
import type { SessionPort } from "./port.ts";
import { findTool, type ToolOutcome, Workspace } from "./tools/index.ts";
import { scanLimitFor, yieldToEventLoop } from "./tools/scan-budget.ts";
import { toolResultEvent } from "./turns.ts";

/**
 * Times a tool call is started before the engine gives up on it. A start that never produced
 * a result means the session died while the call ran (a crash, a restart, a runtime that
 * killed a stuck isolate); one retry covers an unlucky restart, and a call that dies twice is
 * answered with an error rather than re-run by every alarm forever.
 */
export const MAX_TOOL_ATTEMPTS = 2;

/** What running a batch of calls did. */
export interface CallsRun {
  /** The events appended, as stored. */
  appended: Event[];
  /** The call a wait was opened for, if one was (a batch opens at most one). */
  opened: string | null;
}

/** Whose calls a batch holds, and where their start counts are kept. */
export interface CallScope {
  /** The engine state the start counts live in (shared by concurrent runners). */
  engine: EngineCell;
  /** The session's own agent, or a subagent (read-only; its results carry its Task's id). */
  agent: Agent;
  /** The `Task` call a subagent works for; null for the session's own calls. */
  taskId: string | null;
  /** Whether the session offers `Task` (deep): only then is it a known tool. */
  offersTask: boolean;
}

/** The session's own calls (not a subagent's). */
export function mainScope(engine: EngineCell, offersTask: boolean): CallScope {
  return { engine, agent: "main", taskId: null, offersTask };
}

/**
 * Runs tool calls in order, each through the permission check, and persists each one's effect
 * together with its tool result in one transaction (a restart re-runs only calls without a
 * result, so no effect happens twice). Each start is recorded before the call runs, so a call
 * interrupted {@link MAX_TOOL_ATTEMPTS} times ends as an error result instead. A question or
 * plan review opens a wait instead of answering; only one wait can be open, so a second wait
 * call in the same reply is refused.
 */
export async function runToolCalls(
  port: SessionPort,
  calls: readonly ToolUseBlock[],
  scope: CallScope,
): Promise<CallsRun> {
  const planPath = port.facts.planPath;
  const workspace = new Workspace(port, planPath);
  const batch = new Set(calls.map((c) => c.id));
  const run: CallsRun = { appended: [], opened: null };
  for (const call of calls) {
    const attempts = startsOf(scope.engine.get(), scope.taskId)[call.id] ?? 0;
    let answer: CallAnswer;
    if (attempts >= MAX_TOOL_ATTEMPTS) answer = notFinished(call, attempts);
    else {
      scope.engine.set(recordStart(scope.engine.get(), scope.taskId, call.id, batch));
      // Let the runtime commit that write before the call runs: a call that then hangs the
      // isolate must not take its own start record down with it.
      await yieldToEventLoop();
      answer = await answerOf(port, workspace, call, planPath, scope);
    }
    if (answer.kind === "wait") {
      const wait = answer.wait;
      port.transaction(() =>
        port.openWait({ kind: wait.kind, tool_use_id: call.id, input: wait.input }),
      );
      run.opened = call.id;
      continue;
    }
    const result = answer;
    const stored = port.transaction(() => {
      if (result.kind === "result") result.apply?.();
      const event: NewEvent = toolResultEvent(
        {
          type: "tool_result",
          tool_use_id: call.id,
          content:
            result.kind === "denied" ? `Permission denied: ${result.reason}` : result.content,
          is_error: result.kind === "denied" || result.isError,
        },
        scope.taskId,
      );
      return port.appendEvents([
        result.kind === "denied" ? { ...event, permission_denied: true } : event,
      ]);
    });
    run.appended.push(...stored);
  }
  return run;
}

/** A tool's outcome, or the permission check's refusal (the call did not run). */
type CallAnswer = ToolOutcome | { kind: "denied"; reason: string };

/** The start counts of a scope: the session's own, or one Task's. */
function startsOf(state: EngineState, taskId: string | null): Record<string, number> {
  return taskId === null ? state.toolAttempts : (state.taskAttempts[taskId] ?? {});
}

/**
 * The state with one more start of `id`. Only calls of the current batch are kept: the calls
 * of earlier replies have their results (or waits), so their counts are no longer facts anyone
 * needs. A subagent's counts are kept under its Task, apart from the other subagents'.
 */
function recordStart(
  state: EngineState,
  taskId: string | null,
  id: string,
  batch: ReadonlySet<string>,
): EngineState {
  const current = startsOf(state, taskId);
  const kept = Object.entries(current).filter(([callId]) => batch.has(callId));
  const starts = { ...Object.fromEntries(kept), [id]: (current[id] ?? 0) + 1 };
  return taskId === null
    ? { ...state, toolAttempts: starts }
    : { ...state, taskAttempts: { ...state.taskAttempts, [taskId]: starts } };
}

/**
 * The state without a Task's start counts (its Task was answered).
 *
 * @example
 * forgetTask(state, "toolu_task").taskAttempts // without "toolu_task"
 */
export function forgetTask(state: EngineState, taskId: string): EngineState {
  if (!Object.hasOwn(state.taskAttempts, taskId)) return state;
  const { [taskId]: _done, ...rest } = state.taskAttempts;
  return { ...state, taskAttempts: rest };
}

/** The answer to a call that was started and interrupted too often to try again. */
function notFinished(call: ToolUseBlock, attempts: number): ToolOutcome {
  return {
    kind: "result",
    content: `${call.name} did not finish: it was started ${attempts} times, and each time the session was interrupted (the worker restarted or stopped) before the call answered, so it was not run again. Try a narrower call (a path or glob, a simpler pattern) or another way to find what you need.`,
    isError: true,
  };
}

async function answerOf(
  port: SessionPort,
  workspace: Workspace,
  call: ToolUseBlock,
  planPath: string,
  scope: CallScope,
): Promise<CallAnswer> {
  const mode = port.permissionMode();
  const permission = decidePermission({
    mode,
    tool: call.name,
    input: call.input,
    planPath,
    agent: scope.agent,
    offersTask: scope.offersTask,
    runsCommands: port.commands !== null,
  });
  if (permission.behavior === "deny") return { kind: "denied", reason: permission.reason };
  const tool = findTool(call.name);
  if (tool === undefined)
    return { kind: "result", content: `There is no tool named "${call.name}".`, isError: true };
  if ((WAIT_TOOLS as readonly string[]).includes(call.name) && port.pendingWait() !== null) {
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
      callId: call.id,
      target: permission.target,
      scanLimit: scanLimitFor(port.facts.planner),
    });
  } catch (error) {
    // A tool that breaks (a storage hiccup, a bug) must not wedge the session: the model hears
    // what happened and can try again or work around it.
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "result", content: `${call.name} failed: ${message}`, isError: true };
  }
}
