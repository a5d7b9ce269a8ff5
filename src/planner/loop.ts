import type {
  Event,
  NewEvent,
  Pending,
  PermissionMode,
  PlanDecisionRecord,
  ToolUseBlock,
} from "../protocol/index.ts";
import { humanText, isHumanTurn, toolUses, unansweredCalls } from "./conversation.ts";
import { answersEvent } from "./decisions.ts";
import { type EngineState, parseEngineState } from "./engine-state.ts";
import { assignReminders, buildRequest, normalizeContent } from "./model-request.ts";
import { createPlanner } from "./models/index.ts";
import { callPlanner, type RetryPolicy } from "./models/retry.ts";
import { retryPolicyFromEnv } from "./models/retry-config.ts";
import { ModelCallError, type ModelTurn, type Planner } from "./models/types.ts";
import type { PlannerEnv, SessionPort, StepResult } from "./port.ts";
import { runToolCalls } from "./tool-calls.ts";
import {
  lastConversational,
  modelCallsSinceInput,
  modelTurns,
  turnEndRecorded,
  turnSuccess,
} from "./turns.ts";

/** Seams for tests and benchmarks; the session passes none. */
export interface StepOptions {
  /** Use this planner instead of the one the session names. */
  planner?: Planner;
  /** Override parts of the retry policy (tests shorten the backoff). */
  retry?: Partial<RetryPolicy>;
  signal?: AbortSignal;
}

const IDLE: StepResult = { next: "idle" };
const CONTINUE: StepResult = { next: "continue" };

/**
 * What one step works from: the session's state, read once when the step starts, and the log
 * kept current with what the step itself appends. Events others append meanwhile (a message, a
 * decision) are the next step's: each of them asks for one.
 */
interface Step {
  readonly port: SessionPort;
  readonly events: Event[];
  readonly waitedCalls: ReadonlySet<string>;
  readonly decisions: readonly PlanDecisionRecord[];
  readonly mode: PermissionMode;
  engine: EngineState;
}

/**
 * One step of the agent loop: at most one model call and the tool calls it asked for, each
 * persisted before the next thing happens. The session calls it from its alarm and follows the
 * answer: `continue` (step again now), `wait` (until the user acts, or `wakeAt` for the AFK
 * timeout) or `idle`.
 *
 * Resuming is built in: tool calls of the newest reply that have no result yet run first (a
 * step that crashed after storing the reply never calls the model again for it), an open wait
 * is honoured, a turn whose end was not recorded gets its `result/success`, and an ended or
 * teleported session is never stepped again.
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
  const s: Step = { port, events, waitedCalls, decisions, mode, engine: engine.value };
  openTask(s);
  return (
    (await resumeCalls(s)) ??
    answerOrWait(s, state.wait) ??
    endOfReply(s) ??
    (await modelTurn(s, env, options))
  );
}

/** Appends to the log and to the step's copy of it; returns the events as stored. */
function append(s: Step, events: readonly NewEvent[]): Event[] {
  const stored = s.port.appendEvents(events);
  s.events.push(...stored);
  return stored;
}

/**
 * On the first step: the task as the first user message (the session stores the prompt but
 * does not log it; a message the user sent before the first step comes before it, and the
 * engine never writes the task twice).
 */
function openTask(s: Step): void {
  if (s.engine.opened) return;
  const prompt = s.port.facts.prompt;
  const logged = s.events.some((e) => isHumanTurn(e) && humanText(e) === prompt);
  const opened: EngineState = { ...s.engine, opened: true };
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
  const open = unansweredCalls(s.events)?.calls ?? [];
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
  const last = lastConversational(s.events);
  if (last?.type !== "assistant" || toolUses(last).length > 0) return null;
  recordTurnEnd(s, true);
  return IDLE;
}

/** One model call, its reply stored, and the tool calls it asked for. */
async function modelTurn(s: Step, env: PlannerEnv, options: StepOptions): Promise<StepResult> {
  s.engine = assignReminders(s.port, s.events, s.engine, s.mode);
  const maxTurns = s.port.facts.maxTurns;
  const calls = modelCallsSinceInput(s.events, s.waitedCalls);
  if (calls >= maxTurns) {
    s.port.endSession(
      "error_max_turns",
      `The planner made ${calls} model calls in a row without input from you (the limit is ${maxTurns}), so the session stopped. Start a new session with a narrower task, or raise PLANPORT_MAX_TURNS.`,
    );
    return IDLE;
  }

  const planner = options.planner ?? createPlanner(s.port.facts, env);
  let turn: ModelTurn;
  try {
    turn = await callPlanner(planner, buildRequest(s.port, s, options.signal), {
      ...retryPolicyFromEnv(env),
      ...options.retry,
    });
  } catch (error) {
    const message =
      error instanceof ModelCallError ? error.message : `The planner failed: ${String(error)}`;
    // Provider messages do not all end a sentence ("…sent an answer that is not JSON").
    const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
    if (!s.port.hasEnded()) {
      s.port.endSession(
        "error_during_execution",
        `${sentence} The session stopped; start a new session to try again.`,
      );
    }
    return IDLE;
  }
  // The user may have archived the session while the model was thinking.
  if (s.port.hasEnded()) return IDLE;

  const content = normalizeContent(turn, s.events, s.port.facts.id);
  const [reply] = s.port.transaction(() => {
    const stored = append(s, [
      {
        type: "assistant",
        message: {
          role: "assistant",
          content,
          usage: turn.usage,
          ...(turn.model && { model: turn.model }),
        },
      },
    ]);
    s.port.addUsage(turn.usage);
    return stored;
  });

  // The calls as stored (an oversized reply is shortened there): a replay after a crash runs
  // exactly these, so the first run must too.
  const requested = reply?.type === "assistant" ? toolUses(reply) : [];
  if (requested.length === 0) {
    recordTurnEnd(s, true);
    return IDLE;
  }
  return runCalls(s, requested);
}

/**
 * Runs tool calls, then says what follows: nothing after the end, the next step when no wait
 * opened, else the wait (the turn's end recorded). A question already due (its AFK timeout
 * passed while the calls ran) is answered by the next step, from fresh state.
 */
async function runCalls(s: Step, calls: readonly ToolUseBlock[]): Promise<StepResult> {
  const run = await runToolCalls(s.port, s.engine, calls);
  s.engine = run.engine;
  s.events.push(...run.appended);
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
  if (turnEndRecorded(s.events)) return;
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
