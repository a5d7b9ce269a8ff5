import type { ToolResultBlock, ToolUseBlock } from "../protocol/index.ts";
import { compact, fitOf, overflowSentence } from "./compaction.ts";
import { CHARS_PER_TOKEN, TASK_REPORT_SHARE } from "./context-budget.ts";
import { toolUses, unansweredCalls } from "./conversation.ts";
import { askModel, failureSentence, type ModelSetup, modelSetup, turnCost } from "./model-calls.ts";
import {
  buildTaskRequest,
  normalizeContent,
  SUBAGENT_MAX_TURNS,
  subagentBudget,
} from "./model-request.ts";
import { decidePermission } from "./permissions.ts";
import { append, engineCell, type Step } from "./step-state.ts";
import { lastAssistant, type Thread, threadOf } from "./threads.ts";
import { forgetTask, runToolCalls } from "./tool-calls.ts";
import { TaskInput } from "./tools/index.ts";
import { describeInvalidInput } from "./tools/types.ts";
import { assistantEvent, modelTurns, toolResultEvent } from "./turns.ts";

/**
 * `Task` subagents (DESIGN.md "Subagents"). Each Task call of a `deep` session runs a
 * conversation of its own in the session's log: its task as the first user event, then its
 * replies and tool results, every one carrying `parent_tool_use_id` = the Task's id. Its final
 * reply (one without tool calls) is the Task's tool result.
 *
 * A step advances every unanswered Task of the session's newest reply by one move, all at once:
 * one model call each (concurrent requests) and the read-only tool calls it asked for. Every
 * effect is stored as it happens, so a restart resumes each subagent where its log ends — a
 * finished turn is never asked again, a finished Task never run again — and no step holds more
 * than one model call per conversation (the alarm's wall-time limit stays far away).
 */

/**
 * Advances the Task calls `calls` (all unanswered) by one move each, concurrently. Returns
 * whether every one of them is answered now.
 */
export async function advanceTasks(s: Step, calls: readonly ToolUseBlock[]): Promise<boolean> {
  const moves = calls.map((call) => advanceTask(s, call));
  // Every move runs to its end before the step goes on: a move still running after the step
  // returned would race the next step's move of the same subagent.
  const settled = await Promise.allSettled(moves);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  return calls.every((call) => taskAnswered(s, call.id));
}

function taskAnswered(s: Step, taskId: string): boolean {
  return s.events.some(
    (e) =>
      e.type === "user" &&
      typeof e.message.content !== "string" &&
      e.message.content.some((b) => b.type === "tool_result" && b.tool_use_id === taskId),
  );
}

/** One move of one subagent: start it, resume its tool calls, or one model turn. */
async function advanceTask(s: Step, call: ToolUseBlock): Promise<void> {
  const refusal = refusalOf(s, call);
  if (refusal !== null) return finishTask(s, call.id, refusal, true);
  const input = TaskInput.parse(call.input);

  let thread = threadOf(s.events, call.id);
  if (thread.all.length === 0) {
    s.port.transaction(() =>
      append(s, [
        {
          type: "user",
          message: { role: "user", content: input.prompt },
          parent_tool_use_id: call.id,
        },
      ]),
    );
    thread = threadOf(s.events, call.id);
  }

  // Tool calls of its newest reply without a result (a restart while they ran).
  const open = unansweredCalls(thread.all)?.calls ?? [];
  if (open.length > 0) return runSubagentCalls(s, call.id, open);

  const last = lastAssistant(thread.all);
  if (last !== undefined && toolUses(last).length === 0) {
    return finishTask(s, call.id, reportOf(s, thread), false);
  }
  const turns = modelTurns(thread.all);
  if (turns >= SUBAGENT_MAX_TURNS) return finishTask(s, call.id, limitReport(s, thread), true);

  let setup: ModelSetup;
  try {
    setup = modelSetup(s);
  } catch (error) {
    return finishTask(s, call.id, `The subagent could not start: ${failureSentence(error)}`, true);
  }
  const budget = subagentBudget(setup.budget);
  const lastTurn = turns + 1 >= SUBAGENT_MAX_TURNS;
  const request = buildTaskRequest(
    s.port,
    thread,
    input.prompt,
    budget,
    lastTurn,
    s.options.signal,
  );
  const fit = fitOf(request, thread, budget);
  if (fit.kind === "overflow") {
    return finishTask(
      s,
      call.id,
      `The subagent stopped: ${overflowSentence(fit, budget!)}. ${partialFindings(thread)}`,
      true,
    );
  }

  try {
    if (fit.kind === "compact") {
      const done = await compact(s, setup, thread, request, budget!, fit.estimate);
      if (!done.ok) {
        return finishTask(
          s,
          call.id,
          `The subagent stopped: its conversation could not be compacted (${done.error}). ${partialFindings(thread)}`,
          true,
        );
      }
      return;
    }
    const turn = await askModel(setup, request);
    if (s.port.hasEnded()) return;
    const stored = s.port.transaction(() => {
      const content = normalizeContent(turn, s.events, s.port.facts.id);
      const [reply] = append(s, [assistantEvent(turn, content, call.id)]);
      s.port.addUsage(turn.usage, turnCost(setup, turn));
      const calls = reply?.type === "assistant" ? toolUses(reply) : [];
      // The final reply and the Task's result land together: a finished Task is one write.
      if (calls.length === 0) finish(s, call.id, reportOf(s, threadOf(s.events, call.id)), false);
      return calls;
    });
    if (stored.length > 0) await runSubagentCalls(s, call.id, stored);
  } catch (error) {
    if (s.port.hasEnded()) return;
    return finishTask(s, call.id, `The subagent failed: ${failureSentence(error)}`, true);
  }
}

/**
 * Why a Task call cannot start, or null: the permission check (which also refuses what is
 * not a JSON object), then the input's shape.
 */
function refusalOf(s: Step, call: ToolUseBlock): string | null {
  const permission = decidePermission({
    mode: s.port.permissionMode(),
    tool: call.name,
    input: call.input,
    planPath: s.port.facts.planPath,
    offersTask: true,
  });
  if (permission.behavior === "deny") return `Permission denied: ${permission.reason}`;
  const parsed = TaskInput.safeParse(call.input);
  return parsed.success ? null : describeInvalidInput(call.name, parsed.error);
}

/** A subagent's read-only tool calls, each stored with its Task's id. */
async function runSubagentCalls(
  s: Step,
  taskId: string,
  calls: readonly ToolUseBlock[],
): Promise<void> {
  const run = await runToolCalls(s.port, calls, {
    engine: engineCell(s),
    agent: "subagent",
    taskId,
    offersTask: true,
  });
  s.events.push(...run.appended);
}

function finishTask(s: Step, taskId: string, content: string, isError: boolean): void {
  s.port.transaction(() => finish(s, taskId, content, isError));
}

/** Appends the Task's tool result (top level) and forgets its start counts; inside a transaction. */
function finish(s: Step, taskId: string, content: string, isError: boolean): void {
  const block: ToolResultBlock = {
    type: "tool_result",
    tool_use_id: taskId,
    content,
    is_error: isError,
  };
  append(s, [toolResultEvent(block)]);
  const next = forgetTask(s.engine, taskId);
  if (next !== s.engine) {
    s.engine = next;
    s.port.saveEngineState(next);
  }
}

/** The subagent's report: the text of its final reply, cut to its share of the context. */
function reportOf(s: Step, thread: Thread): string {
  const last = lastAssistant(thread.all);
  const text = (last?.message.content ?? [])
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join("\n\n")
    .trim();
  return capReport(s, text === "" ? "(The subagent ended without a report.)" : text);
}

/** When the turn limit ended the Task: what it said along the way. */
function limitReport(s: Step, thread: Thread): string {
  return capReport(
    s,
    `The subagent used its ${SUBAGENT_MAX_TURNS} model turns without finishing its report. ${partialFindings(thread)}`,
  );
}

/** What a subagent said on its way, for a Task that ended early. */
function partialFindings(thread: Thread): string {
  const said = thread.all
    .flatMap((e) =>
      e.type === "assistant"
        ? e.message.content.flatMap((b) => (b.type === "text" ? [b.text.trim()] : []))
        : [],
    )
    .filter((t) => t !== "");
  return said.length > 0
    ? `What it said along the way:\n\n${said.join("\n\n")}`
    : "It reported nothing along the way.";
}

/** A report within {@link TASK_REPORT_SHARE} of the session's context budget. */
function capReport(s: Step, report: string): string {
  let budget: number | null;
  try {
    budget = modelSetup(s).budget;
  } catch {
    budget = null;
  }
  if (budget === null) return report;
  const max = Math.floor(budget * TASK_REPORT_SHARE * CHARS_PER_TOKEN);
  return report.length <= max
    ? report
    : `${report.slice(0, max)}… [the report was cut to ${max} characters, its share of the context budget]`;
}
