import {
  type AssistantEvent,
  type Event,
  type NewEvent,
  type Pending,
  TOOL_NAMES,
  type ToolUseBlock,
} from "../protocol/index.ts";
import { humanText, isHumanTurn, unansweredCalls } from "./conversation.ts";
import { afkAnswersResult } from "./decisions.ts";
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
  sessionOver,
  toolResultEvent,
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

function toolUses(content: AssistantEvent["message"]["content"]): ToolUseBlock[] {
  return content.filter((b): b is ToolUseBlock => b.type === "tool_use");
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
 * // in SessionObject.alarm():
 * const next = await step(this.port, this.env);
 */
export async function step(
  port: SessionPort,
  env: PlannerEnv,
  options: StepOptions = {},
): Promise<StepResult> {
  const loaded = parseEngineState(port.loadEngineState());
  if (!loaded.ok) {
    if (!sessionOver(port.listEvents())) port.endSession("error_during_execution", loaded.error);
    return IDLE;
  }
  if (sessionOver(port.listEvents())) return IDLE;
  let state = writeOpening(port, loaded.value);
  let events = port.listEvents();

  // 1. Tool calls of the newest reply that have no result yet (first run, or after a crash).
  const open = unansweredCalls(events);
  const waiting = port.pendingWait();
  const toRun = (open?.calls ?? []).filter(
    (c) => c.id !== waiting?.tool_use_id && !state.openedWaits.includes(c.id),
  );
  if (toRun.length > 0) {
    state = await runToolCalls(port, state, toRun);
    events = port.listEvents();
    if (sessionOver(events)) return IDLE;
    if (port.pendingWait() === null) return { next: "continue" };
  }

  // 2. An open question or plan review: answer it for an absent user, or keep waiting.
  const wait = port.pendingWait();
  if (wait !== null) {
    const deadline = afkDeadline(port, wait);
    if (deadline === null || port.now() < deadline) {
      recordTurnEnd(port, events, state, false);
      return deadline === null ? { next: "wait" } : { next: "wait", wakeAt: deadline };
    }
    const partial = port.partialAnswers(wait.tool_use_id);
    port.transaction(() => {
      port.appendEvents([toolResultEvent(afkAnswersResult(wait.tool_use_id, partial))]);
      port.closeWait(wait.tool_use_id);
    });
    events = port.listEvents();
  }

  // 3. A reply without tool calls ended the turn: nothing to do until the user writes.
  const last = lastConversational(events);
  if (last?.type === "assistant" && !last.message.content.some((b) => b.type === "tool_use")) {
    recordTurnEnd(port, events, state, true);
    return IDLE;
  }

  // 4. One model call.
  state = assignReminders(port, events, state);
  const maxTurns = port.facts.maxTurns;
  const calls = modelCallsSinceInput(events, state.openedWaits);
  if (calls >= maxTurns) {
    port.endSession(
      "error_max_turns",
      `The planner made ${calls} model calls in a row without input from you (the limit is ${maxTurns}), so the session stopped. Start a new session with a narrower task, or raise PLANPORT_MAX_TURNS.`,
    );
    return IDLE;
  }

  const planner = options.planner ?? createPlanner(port.facts, env);
  let turn: ModelTurn;
  try {
    turn = await callPlanner(planner, buildRequest(port, events, state, options.signal), {
      ...retryPolicyFromEnv(env),
      ...options.retry,
    });
  } catch (error) {
    const message =
      error instanceof ModelCallError ? error.message : `The planner failed: ${String(error)}`;
    // Provider messages do not all end a sentence ("…sent an answer that is not JSON").
    const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
    if (!sessionOver(port.listEvents())) {
      port.endSession(
        "error_during_execution",
        `${sentence} The session stopped; start a new session to try again.`,
      );
    }
    return IDLE;
  }
  // The user may have archived the session while the model was thinking.
  if (sessionOver(port.listEvents())) return IDLE;

  const content = normalizeContent(turn, events, port.facts.id);
  const stored = port.transaction(() => {
    const [reply] = port.appendEvents([
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
    port.addUsage(turn.usage);
    return reply;
  });

  // The calls as stored (an oversized reply is shortened there): a replay after a crash runs
  // exactly these, so the first run must too.
  const requested = stored?.type === "assistant" ? toolUses(stored.message.content) : [];
  if (requested.length === 0) {
    recordTurnEnd(port, port.listEvents(), state, true);
    return IDLE;
  }
  state = await runToolCalls(port, state, requested);
  events = port.listEvents();
  if (sessionOver(events)) return IDLE;
  const opened = port.pendingWait();
  if (opened === null) return { next: "continue" };
  recordTurnEnd(port, events, state, false);
  const deadline = afkDeadline(port, opened);
  return deadline === null ? { next: "wait" } : { next: "wait", wakeAt: deadline };
}

/**
 * On the first step: `system/init` unless the session wrote it, and the task as the first user
 * message (the session stores the prompt but does not log it; a message the user sent before
 * the first step comes before it, and the engine never writes the task twice).
 */
function writeOpening(port: SessionPort, state: EngineState): EngineState {
  if (state.opened) return state;
  const events = port.listEvents();
  const opening: NewEvent[] = [];
  if (!events.some((e) => e.type === "system" && e.subtype === "init")) {
    opening.push({
      type: "system",
      subtype: "init",
      permission_mode: port.permissionMode(),
      planner: port.facts.planner,
      tools: [...TOOL_NAMES],
      session_id: port.facts.id,
      plan_file: port.facts.planPath,
    });
  }
  const prompt = port.facts.prompt;
  const logged = events.some((e) => e.type === "user" && isHumanTurn(e) && humanText(e) === prompt);
  if (!logged && prompt.trim() !== "") {
    opening.push({ type: "user", message: { role: "user", content: prompt } });
  }
  const opened: EngineState = { ...state, opened: true };
  port.transaction(() => {
    if (opening.length > 0) port.appendEvents(opening);
    port.saveEngineState(opened);
  });
  return opened;
}

/**
 * Writes the turn's `result/success` if it is missing (idempotent: a restart between the last
 * write of a turn and its result still gets exactly one). A finished reply after approval also
 * marks remote execution finished.
 */
function recordTurnEnd(
  port: SessionPort,
  events: readonly Event[],
  state: EngineState,
  replied: boolean,
): void {
  if (turnEndRecorded(events)) return;
  const numTurns = modelCallsSinceInput(events, state.openedWaits);
  port.transaction(() => {
    port.appendEvents([turnSuccess(numTurns)]);
    if (replied && port.permissionMode() !== "plan") port.finishExecution();
  });
}

/** When the AFK timeout answers the open question, or null (off, or a plan review). */
function afkDeadline(port: SessionPort, wait: Pending): number | null {
  const seconds = port.facts.askTimeoutS;
  if (wait.kind !== "question" || seconds === null || seconds <= 0) return null;
  const openedAt = Date.parse(wait.opened_at);
  return (Number.isNaN(openedAt) ? port.now() : openedAt) + seconds * 1000;
}
