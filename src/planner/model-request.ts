import type { Event, PermissionMode, PlanDecisionRecord, TextBlock } from "../protocol/index.ts";
import { outputTokensFor, SUBAGENT_CONTEXT_SHARE } from "./context-budget.ts";
import { buildConversation, isHumanTurn } from "./conversation.ts";
import { userInputs } from "./decisions.ts";
import type { EngineState } from "./engine-state.ts";
import type { ModelRequest, ModelTurn } from "./models/types.ts";
import { CONTINUE_NOTE, continuationText, planFileText } from "./plan-mode/compaction-prompts.ts";
import { type ReminderFacts, reminderText, SYSTEM_PROMPT } from "./plan-mode/prompts.ts";
import { nextReminder } from "./plan-mode/reminders.ts";
import {
  LAST_TURN_NOTE,
  SUBAGENT_SYSTEM_PROMPT,
  subagentReminder,
} from "./plan-mode/subagent-prompts.ts";
import type { SessionPort } from "./port.ts";
import type { Thread } from "./threads.ts";
import { SUBAGENT_TOOL_SPECS, toolSpecsFor } from "./tools/index.ts";

/**
 * What goes to the model and what comes back into the log: the reminders decided per human
 * turn, the requests (stable system prompt and tools, the rebuilt conversation — the session's
 * own or a subagent's, continued from its summary after a compaction), and the reply
 * normalised for storage.
 */

export { MAX_OUTPUT_TOKENS } from "./context-budget.ts";

/** Model calls a `Task` subagent may make, its last one told to report. */
export const SUBAGENT_MAX_TURNS = 12;

/**
 * Decides the reminder of every human turn the schedule has not seen yet (by the pure
 * schedule in plan-mode/reminders.ts) and stores the decisions, so rebuilding is stable.
 * `events` is the session's own conversation (a subagent's task is no human turn).
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
  /** The session's own conversation. */
  thread: Thread;
  /** The whole log (the users' answers are read from it). */
  events: readonly Event[];
  decisions: readonly PlanDecisionRecord[];
  engine: EngineState;
  mode: PermissionMode;
}

/**
 * The model request for the session's own conversation so far. `budget` (null: none) bounds
 * the reply's length.
 */
export function buildRequest(
  port: SessionPort,
  source: RequestSource,
  budget: number | null,
  signal?: AbortSignal,
): ModelRequest {
  const { facts } = port;
  const { thread, engine, mode } = source;
  const reminderFacts = (planExists: boolean): ReminderFacts => ({
    planPath: facts.planPath,
    planExists,
    instructions: facts.instructions,
    hasSnapshot: facts.snapshotId !== null,
    variant: facts.variant,
    ...(facts.seeded === true && { seeded: true }),
  });
  const byEvent = new Map(engine.reminders.map((r) => [r.eventId, r]));
  const messages = buildConversation(
    thread.recent,
    (eventId) => {
      const r = byEvent.get(eventId);
      return r ? reminderText(r.kind, reminderFacts(r.planExists)) : null;
    },
    thread.boundary === null ? [] : continuedOpening(port, thread, reminderFacts),
  );
  return {
    system: SYSTEM_PROMPT,
    tools: toolSpecsFor(facts.variant, mode, port.commands !== null),
    messages,
    inputs: userInputs(thread.all, source.decisions),
    maxOutputTokens: outputTokensFor(budget),
    context: {
      sessionId: facts.id,
      mode,
      planPath: facts.planPath,
      variant: facts.variant,
      ...seedContext(port),
    },
    signal,
  };
}

/** The draft a seeded session started from (revision 1), for planners that do not read prose. */
function seedContext(port: SessionPort): { seedPlan?: string } {
  if (port.facts.seeded !== true) return {};
  const seed = port.readPlanRevision(1);
  return seed === null ? {} : { seedPlan: seed.content };
}

/**
 * How the session's conversation starts again after a compaction: the summary, the full
 * plan-mode reminder (plan file path, whether it exists, the workflow) and the plan file as it
 * stood then — read from its stored revision, so rebuilding later sends the very same text.
 */
function continuedOpening(
  port: SessionPort,
  thread: Thread,
  reminderFacts: (planExists: boolean) => ReminderFacts,
): TextBlock[] {
  const boundary = thread.boundary!;
  const revision = boundary.plan_revision ?? 0;
  const plan = revision > 0 ? port.readPlanRevision(revision) : null;
  return [
    text(continuationText(port.facts.prompt, boundary.summary ?? "")),
    text(reminderText("full", reminderFacts(plan !== null))),
    ...(plan === null ? [] : [text(planFileText(port.facts.planPath, revision, plan.content))]),
    text(CONTINUE_NOTE),
  ];
}

/** A subagent's conversation budget: its share of the session's. */
export function subagentBudget(budget: number | null): number | null {
  return budget === null ? null : Math.floor(budget * SUBAGENT_CONTEXT_SHARE);
}

/**
 * The model request of a `Task` subagent: its own system prompt and the read-only tools
 * (both the same for every subagent: one cached prefix), its task with the subagent reminder,
 * and on its last allowed turn a note to report now. `taskBudget` is its conversation's budget.
 */
export function buildTaskRequest(
  port: SessionPort,
  thread: Thread,
  prompt: string,
  taskBudget: number | null,
  lastTurn: boolean,
  signal?: AbortSignal,
): ModelRequest {
  const { facts } = port;
  const reminder = subagentReminder(facts.planPath, SUBAGENT_MAX_TURNS);
  const first = thread.all[0]?.id;
  const messages = buildConversation(
    thread.recent,
    (eventId) => (eventId === first ? reminder : null),
    thread.boundary === null
      ? []
      : [
          text(continuationText(prompt, thread.boundary.summary ?? "")),
          text(reminder),
          text(CONTINUE_NOTE),
        ],
  );
  const last = messages.at(-1);
  if (lastTurn && last?.role === "user") {
    messages[messages.length - 1] = {
      role: "user",
      content: [...last.content, text(LAST_TURN_NOTE)],
    };
  }
  return {
    system: SUBAGENT_SYSTEM_PROMPT,
    tools: SUBAGENT_TOOL_SPECS,
    messages,
    inputs: new Map(),
    maxOutputTokens: outputTokensFor(taskBudget),
    context: {
      sessionId: facts.id,
      mode: port.permissionMode(),
      planPath: facts.planPath,
      variant: facts.variant,
      ...(thread.taskId !== null && { taskId: thread.taskId }),
    },
    signal,
  };
}

function text(t: string): TextBlock {
  return { type: "text", text: t };
}

/**
 * The reply as it is stored: tool calls get an id when the model gave none or one the log
 * already holds (results pair by id, so ids must be unique), and an empty reply says so. Call
 * it right before the reply is appended, with no `await` between: concurrent subagents then
 * never pick the same id.
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
