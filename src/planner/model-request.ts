import type { Event, PermissionMode, PlanDecisionRecord } from "../protocol/index.ts";
import { buildConversation, isHumanTurn } from "./conversation.ts";
import { userInputs } from "./decisions.ts";
import type { EngineState } from "./engine-state.ts";
import type { ModelRequest, ModelTurn } from "./models/types.ts";
import { reminderText, SYSTEM_PROMPT } from "./plan-mode/prompts.ts";
import { nextReminder } from "./plan-mode/reminders.ts";
import type { SessionPort } from "./port.ts";
import { TOOL_SPECS } from "./tools/index.ts";

/**
 * What goes to the model and what comes back into the log: the reminders decided per human
 * turn, the request (stable system prompt and tools, the rebuilt conversation), and the reply
 * normalised for storage.
 */

/** Output budget of one model call. */
export const MAX_OUTPUT_TOKENS = 16_384;

/**
 * Decides the reminder of every human turn the schedule has not seen yet (by the pure
 * schedule in plan-mode/reminders.ts) and stores the decisions, so rebuilding is stable.
 */
export function assignReminders(
  port: SessionPort,
  events: readonly Event[],
  state: EngineState,
  mode: PermissionMode,
): EngineState {
  const start =
    state.lastHumanEventId === null
      ? 0
      : events.findIndex((e) => e.id === state.lastHumanEventId) + 1;
  const fresh = events.slice(start).filter(isHumanTurn);
  if (fresh.length === 0) return state;
  let { schedule } = state;
  const reminders = [...state.reminders];
  const inPlanMode = mode === "plan";
  const planExists = port.readPlan() !== null;
  for (const turn of fresh) {
    const next = nextReminder(schedule, inPlanMode);
    schedule = next.schedule;
    if (next.kind !== null) reminders.push({ eventId: turn.id, kind: next.kind, planExists });
  }
  const updated: EngineState = {
    ...state,
    schedule,
    reminders,
    lastHumanEventId: fresh[fresh.length - 1]!.id,
  };
  port.transaction(() => port.saveEngineState(updated));
  return updated;
}

/** What a model request is built from: the session as the step knows it. */
export interface RequestSource {
  events: readonly Event[];
  decisions: readonly PlanDecisionRecord[];
  engine: EngineState;
  mode: PermissionMode;
}

/** The model request for the conversation so far. */
export function buildRequest(
  port: SessionPort,
  source: RequestSource,
  signal?: AbortSignal,
): ModelRequest {
  const { facts } = port;
  const { events, engine, mode } = source;
  const byEvent = new Map(engine.reminders.map((r) => [r.eventId, r]));
  const messages = buildConversation(events, (eventId) => {
    const r = byEvent.get(eventId);
    return r
      ? reminderText(r.kind, {
          planPath: facts.planPath,
          planExists: r.planExists,
          instructions: facts.instructions,
          hasSnapshot: facts.snapshotId !== null,
        })
      : null;
  });
  return {
    system: SYSTEM_PROMPT,
    tools: TOOL_SPECS,
    messages,
    inputs: userInputs(events, source.decisions),
    maxOutputTokens: MAX_OUTPUT_TOKENS,
    context: { sessionId: facts.id, mode, planPath: facts.planPath },
    signal,
  };
}

/**
 * The reply as it is stored: tool calls get an id when the model gave none or one the log
 * already holds (results pair by id, so ids must be unique), and an empty reply says so.
 */
export function normalizeContent(
  turn: ModelTurn,
  events: readonly Event[],
  sessionId: string,
): ModelTurn["content"] {
  const seen = new Set<string>();
  for (const e of events)
    if (e.type === "assistant")
      for (const b of e.message.content) if (b.type === "tool_use") seen.add(b.id);
  const serial = events.filter((e) => e.type === "assistant").length;
  const content = turn.content.map((block, i) => {
    if (block.type !== "tool_use") return block;
    const id =
      block.id && !seen.has(block.id) ? block.id : `toolu_${sessionId.slice(-10)}_${serial}_${i}`;
    seen.add(id);
    return { ...block, id };
  });
  return content.length > 0
    ? content
    : [{ type: "text", text: "(The model returned an empty reply.)" }];
}
