import { type Pending, TASK_TOOL, type ToolUseBlock } from "../protocol/index.ts";
import { compact, fitOf, overflowSentence } from "./compaction.ts";
import { humanText, isHumanTurn, toolUses, unansweredCalls } from "./conversation.ts";
import { answersEvent } from "./decisions.ts";
import { parseEngineState } from "./engine-state.ts";
import { askModel, failureSentence, type ModelSetup, modelSetup, turnCost } from "./model-calls.ts";
import { assignReminders, buildRequest, normalizeContent } from "./model-request.ts";
import type { ModelTurn } from "./models/types.ts";
import type { PlannerEnv, SessionPort, StepResult } from "./port.ts";
import { append, engineCell, type Step, type StepOptions } from "./step-state.ts";
import { advanceTasks } from "./subagents.ts";
import { type Thread, threadOf } from "./threads.ts";
import { mainScope, runToolCalls } from "./tool-calls.ts";
import {
  assistantEvent,
  lastConversational,
  modelCallsSinceInput,
  modelTurns,
  turnEndRecorded,
  turnSuccess,
} from "./turns.ts";

export type { StepOptions } from "./step-state.ts";

const IDLE: StepResult = { next: "idle" };
const CONTINUE: StepResult = { next: "continue" };

/**
 * One step of the agent loop: at most one model call per conversation — the session's own, or
 * one each for the subagents of its newest reply's `Task` calls, all at once — and the tool
 * calls they asked for, each persisted before the next thing happens. The session calls it
 * from its alarm and follows the answer: `continue` (step again now), `wait` (until the user
 * acts, or `wakeAt` for the AFK timeout) or `idle`.
 *
 * Resuming is built in: tool calls of the newest reply that have no result yet run first (a
 * step that crashed after storing the reply never calls the model again for it; a Task's
 * subagent goes on where its own log ends), an open wait is honoured, a turn whose end was not
 * recorded gets its `result/success`, and an ended or teleported session is never stepped
 * again. A conversation that nears its context budget is compacted first (compaction.ts).
 *
 * @example
 * // SessionObject.alarm(), through its `planningStep` seam:
 * const next = await step(this.port(), this.env);
 */
export async function step(
  port: SessionPort,
  env: PlannerEnv,
  options: StepOptions = {},
): Promise<StepResult> {
  const state = port.loadState();
  if (state.ended) return IDLE;
  const engine = parseEngineState(state.engineState);
  if (!engine.ok) {
    port.endSession("error_during_execution", engine.error);
    return IDLE;
  }
  const { events, waitedCalls, decisions, mode } = state;
  const s: Step = {
    port,
    env,
    options,
    events,
    waitedCalls,
    decisions,
    mode,
    engine: engine.value,
  };
  openTask(s);
  return (
    (await resumeCalls(s)) ?? answerOrWait(s, state.wait) ?? endOfReply(s) ?? (await modelTurn(s))
  );
}

/** The session's own conversation (its subagents' events left out). */
function main(s: Step): Thread {
  return threadOf(s.events, null);
}

/**
 * On the first step: the task as the first user message (the session stores the prompt but
 * does not log it; a message the user sent before the first step comes before it, and the
 * engine never writes the task twice).
 */
function openTask(s: Step): void {
  if (s.engine.opened) return;
  const prompt = s.port.facts.prompt;
  const logged = main(s).all.some((e) => isHumanTurn(e) && humanText(e) === prompt);
  const opened = { ...s.engine, opened: true };
  s.port.transaction(() => {
    if (!logged && prompt.trim() !== "")
      append(s, [{ type: "user", message: { role: "user", content: prompt } }]);
    s.port.saveEngineState(opened);
  });
  s.engine = opened;
}

/**
 * Tool calls of the newest reply that have no result yet (first run, or after a crash), or
 * null when there are none. Calls a wait was opened for are answered by the user, not run.
 */
async function resumeCalls(s: Step): Promise<StepResult | null> {
  const open = unansweredCalls(main(s).all)?.calls ?? [];
  const toRun = open.filter((c) => !s.waitedCalls.has(c.id));
  if (toRun.length === 0) return null;
  return runCalls(s, toRun);
}

/**
 * An open question or plan review: keep waiting (recording the turn's end), or, once the AFK
 * timeout passed, answer the question for the absent user and go on (null).
 */
function answerOrWait(s: Step, wait: Pending | null): StepResult | null {
  if (wait === null) return null;
  const deadline = afkDeadline(s.port, wait);
  if (deadline === null || s.port.now() < deadline) {
    recordTurnEnd(s, false);
    return waiting(deadline);
  }
  const partial = s.port.partialAnswers(wait.tool_use_id);
  s.port.transaction(() => {
    append(s, [answersEvent(wait.tool_use_id, partial, "afk")]);
    s.port.closeWait(wait.tool_use_id);
  });
  return null;
}

/** A reply without tool calls ended the turn: nothing to do until the user writes. */
function endOfReply(s: Step): StepResult | null {
  const last = lastConversational(main(s).all);
  if (last?.type !== "assistant" || toolUses(last).length > 0) return null;
  recordTurnEnd(s, true);
  return IDLE;
}

/**
 * One model call, its reply stored, and the tool calls it asked for — or, when the request
 * would pass 80 % of the context budget, one call that compacts the conversation instead.
 */
async function modelTurn(s: Step): Promise<StepResult> {
  const thread = main(s);
  s.engine = assignReminders(s.port, thread.all, s.engine, s.mode);
  const maxTurns = s.port.facts.maxTurns;
  const calls = modelCallsSinceInput(thread.all, s.waitedCalls);
  if (calls >= maxTurns) {
    s.port.endSession(
      "error_max_turns",
      `The planner made ${calls} model calls in a row without input from you (the limit is ${maxTurns}), so the session stopped. Start a new session with a narrower task, or raise PLANPORT_MAX_TURNS.`,
    );
    return IDLE;
  }

  let turn: ModelTurn;
  let setup: ModelSetup;
  try {
    setup = modelSetup(s);
    const request = buildRequest(s.port, { ...s, thread }, setup.budget, s.options.signal);
    const fit = fitOf(request, thread, setup.budget);
    if (fit.kind === "overflow") return stop(s, `${overflowSentence(fit, setup.budget!)}.`);
    if (fit.kind === "compact") {
      const done = await compact(s, setup, thread, request, setup.budget!, fit.estimate);
      if (!done.ok) return stop(s, `The conversation could not be compacted: ${done.error}.`);
      return s.port.hasEnded() ? IDLE : CONTINUE;
    }
    turn = await askModel(setup, request);
  } catch (error) {
    return stop(s, failureSentence(error));
  }
  // The user may have archived the session while the model was thinking.
  if (s.port.hasEnded()) return IDLE;

  const reply = s.port.transaction(() => {
    const content = normalizeContent(turn, s.events, s.port.facts.id);
    const [stored] = append(s, [assistantEvent(turn, content)]);
    s.port.addUsage(turn.usage, turnCost(setup, turn));
    return stored;
  });

  // The calls as stored (an oversized reply is shortened there): a replay after a crash runs
  // exactly these, so the first run must too.
  const requested = reply?.type === "assistant" ? toolUses(reply) : [];
  if (requested.length === 0) {
    recordTurnEnd(s, true);
    return IDLE;
  }
  // Subagents start on the next step: one step never holds the session's model call and its
  // subagents' on top of it (the alarm's wall-time limit).
  if (requested.some((c) => isTask(s, c))) return CONTINUE;
  return runCalls(s, requested);
}

/** Ends the session with `error_during_execution` (unless it ended meanwhile). */
function stop(s: Step, sentence: string): StepResult {
  if (!s.port.hasEnded()) {
    s.port.endSession(
      "error_during_execution",
      `${sentence} The session stopped; start a new session to try again.`,
    );
  }
  return IDLE;
}

/** A `Task` call of a session that offers it; elsewhere `Task` is an unknown tool. */
function isTask(s: Step, call: ToolUseBlock): boolean {
  return call.name === TASK_TOOL && s.port.facts.variant === "deep";
}

/**
 * Runs tool calls, then says what follows: nothing after the end, the next step when no wait
 * opened, else the wait (the turn's end recorded). A question already due (its AFK timeout
 * passed while the calls ran) is answered by the next step, from fresh state.
 *
 * With `Task` calls among them: the calls before the first Task run first, then every Task
 * advances one move (concurrently, see subagents.ts); the calls after the first Task run once
 * all the Tasks are answered, so a reply that launches explorers and then asks a question
 * asks it with their reports in hand.
 */
async function runCalls(s: Step, calls: readonly ToolUseBlock[]): Promise<StepResult> {
  const firstTask = calls.findIndex((c) => isTask(s, c));
  if (firstTask === -1) {
    await runOwnCalls(s, calls);
    return afterCalls(s);
  }
  await runOwnCalls(s, calls.slice(0, firstTask));
  if (s.port.hasEnded()) return IDLE;
  const rest = calls.slice(firstTask);
  const done = await advanceTasks(
    s,
    rest.filter((c) => isTask(s, c)),
  );
  if (s.port.hasEnded()) return IDLE;
  if (!done) return CONTINUE;
  await runOwnCalls(
    s,
    rest.filter((c) => !isTask(s, c)),
  );
  return afterCalls(s);
}

async function runOwnCalls(s: Step, calls: readonly ToolUseBlock[]): Promise<void> {
  if (calls.length === 0) return;
  const scope = mainScope(engineCell(s), s.port.facts.variant === "deep");
  const run = await runToolCalls(s.port, calls, scope);
  s.events.push(...run.appended);
}

function afterCalls(s: Step): StepResult {
  if (s.port.hasEnded()) return IDLE;
  const wait = s.port.pendingWait();
  if (wait === null) return CONTINUE;
  const deadline = afkDeadline(s.port, wait);
  if (deadline !== null && s.port.now() >= deadline) return CONTINUE;
  recordTurnEnd(s, false);
  return waiting(deadline);
}

/**
 * Writes the turn's `result/success` if it is missing (idempotent: a restart between the last
 * write of a turn and its result still gets exactly one). A finished reply after approval also
 * marks remote execution finished.
 */
function recordTurnEnd(s: Step, replied: boolean): void {
  if (turnEndRecorded(main(s).all)) return;
  s.port.transaction(() => {
    append(s, [turnSuccess(modelTurns(s.events))]);
    // Read now, not from the step's start: an approval may have arrived during the model call.
    if (replied && s.port.permissionMode() !== "plan") s.port.finishExecution();
  });
}

function waiting(deadline: number | null): StepResult {
  return deadline === null ? { next: "wait" } : { next: "wait", wakeAt: deadline };
}

/** When the AFK timeout answers the open question, or null (off, or a plan review). */
function afkDeadline(port: SessionPort, wait: Pending): number | null {
  const seconds = port.facts.askTimeoutS;
  if (wait.kind !== "question" || seconds === null || seconds <= 0) return null;
  const openedAt = Date.parse(wait.opened_at);
  return (Number.isNaN(openedAt) ? port.now() : openedAt) + seconds * 1000;
}
