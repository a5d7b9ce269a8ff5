/**
 * TEST DOUBLE — an in-memory stand-in for the session Durable Object's `SessionPort`, for unit
 * tests of the planning engine before (and besides) the real object. It is NOT the product's
 * storage: the real port is SQLite inside the Durable Object. What it imitates faithfully is
 * what the engine relies on: transactions that roll back on a throw (so a "crash" in the middle
 * of one leaves no trace), append-only events with sortable ids, the `system/init` event from
 * creation, one open wait at a time, and decisions and answers recorded together with their
 * tool results. A decision is judged and its effects computed by the session's own rules
 * (src/session/decisions/rules.ts), so the double cannot decide differently from the session.
 *
 * `crashWhen` injects a failure into a chosen write, to simulate a restart between two writes.
 */
import { DEFAULT_MAX_TURNS } from "../../src/config.ts";
import { afkAnswersResult, answersEvent } from "../../src/planner/decisions.ts";
import type {
  CommandRun,
  SessionCommands,
  SessionFacts,
  SessionPort,
  SessionState,
  SnapshotEntry,
  SnapshotFiles,
} from "../../src/planner/port.ts";
import { modelTurns } from "../../src/planner/turns.ts";
import type {
  Comment,
  Decision,
  Event,
  NewEvent,
  OutcomeKind,
  Pending,
  PermissionMode,
  PlanDecisionRecord,
  PlanFile,
  ToolResultBlock,
  Usage,
} from "../../src/protocol/index.ts";
import { evaluateDecision } from "../../src/session/decisions/rules.ts";
import { initEvent } from "../../src/session/events/init.ts";

/** An in-memory repository snapshot (TEST DOUBLE of the R2-backed reader). */
export function memorySnapshot(
  files: Readonly<Record<string, string>>,
): SnapshotFiles & { scans: number } {
  const paths = Object.keys(files).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const entries: SnapshotEntry[] = paths.map((path) => ({
    path,
    size: new TextEncoder().encode(files[path]!).length,
  }));
  const snapshot = {
    scans: 0,
    async list() {
      return entries;
    },
    async read(path: string) {
      return Object.hasOwn(files, path) ? files[path]! : null;
    },
    async *scan(filter?: (path: string) => boolean) {
      snapshot.scans++;
      for (const path of paths) if (!filter || filter(path)) yield { path, text: files[path]! };
    },
    async *scanBytes() {
      for (const path of paths) yield { path, bytes: new TextEncoder().encode(files[path]!) };
    },
  };
  return snapshot;
}

export type CrashHook = (
  op: "appendEvents" | "writePlan" | "writeOverlay" | "openWait",
  detail: unknown,
) => boolean;

interface State {
  events: Event[];
  seq: number;
  mode: PermissionMode;
  engineState: unknown;
  plan: PlanFile | null;
  /** Every revision the plan file had, oldest first (the last is `plan`). */
  revisions: PlanFile[];
  overlay: Map<string, string | null>;
  wait: Pending | null;
  /** Every call a wait was opened for. */
  waited: Set<string>;
  partial: Map<string, Record<string, string>>;
  decisions: PlanDecisionRecord[];
  rejectCount: number;
  outcome: OutcomeKind | null;
  usage: Usage;
  /** Dollars so far; null once a call's price was unknown. */
  cost: number | null;
  ended: { subtype: string; message: string } | null;
  finished: boolean;
  archived: boolean;
}

export interface MemoryPortOptions {
  facts?: Partial<SessionFacts>;
  files?: Readonly<Record<string, string>>;
  prePlanMode?: PermissionMode;
  /** Start time in ms; the clock only moves when a test calls `advance`. */
  now?: number;
  /** Where `Bash` runs after approval; none (overlay-only execution) when absent. */
  commands?: SessionCommands | null;
}

/** TEST DOUBLE of the session Durable Object's port. */
export class MemoryPort implements SessionPort {
  readonly facts: SessionFacts;
  readonly snapshot: SnapshotFiles & { scans: number };
  readonly commands: SessionCommands | null;
  /** The commands `Bash` recorded, oldest first. */
  readonly commandRuns: CommandRun[] = [];
  crashWhen: CrashHook | null = null;
  #s: State;
  #depth = 0;
  #clock: number;
  readonly #prePlan: PermissionMode;

  constructor(opts: MemoryPortOptions = {}) {
    this.facts = {
      id: "ses_0000000000testsession0000",
      title: "test session",
      prompt: "Plan something.",
      planner: "scripted",
      planPath: "/plans/bold-eagle.md",
      instructions: null,
      variant: "simple",
      askTimeoutS: null,
      maxTurns: DEFAULT_MAX_TURNS,
      script: null,
      snapshotId: opts.files ? "f".repeat(64) : null,
      ...opts.facts,
    };
    this.snapshot = memorySnapshot(opts.files ?? {});
    this.commands = opts.commands ?? null;
    this.#prePlan = opts.prePlanMode ?? "default";
    this.#clock = opts.now ?? Date.UTC(2026, 0, 1);
    this.#s = {
      events: [],
      seq: 0,
      mode: "plan",
      engineState: null,
      plan: null,
      revisions: [],
      overlay: new Map(),
      wait: null,
      waited: new Set(),
      partial: new Map(),
      decisions: [],
      rejectCount: 0,
      outcome: null,
      usage: { input_tokens: 0, output_tokens: 0 },
      cost: 0,
      ended: null,
      finished: false,
      archived: false,
    };
    // As the session writes it at creation.
    this.appendEvents([initEvent(this.facts)]);
  }

  transaction<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    const saved = this.#copy();
    this.#depth++;
    try {
      return fn();
    } catch (error) {
      this.#s = saved;
      throw error;
    } finally {
      this.#depth--;
    }
  }

  appendEvents(events: readonly NewEvent[]): Event[] {
    this.#crash("appendEvents", events);
    const stored = events.map((e) => {
      this.#s.seq++;
      return {
        ...e,
        id: `evt_${String(this.#s.seq).padStart(16, "0")}`,
        created_at: new Date(this.#clock).toISOString(),
      } as Event;
    });
    this.#s.events.push(...stored);
    return structuredClone(stored);
  }
  loadState(): SessionState {
    return {
      events: this.listEvents(),
      ended: this.hasEnded(),
      mode: this.#s.mode,
      wait: this.pendingWait(),
      waitedCalls: new Set(this.#s.waited),
      decisions: structuredClone(this.#s.decisions),
      engineState: structuredClone(this.#s.engineState),
    };
  }
  hasEnded(): boolean {
    return this.#s.ended !== null || this.#s.archived;
  }
  permissionMode(): PermissionMode {
    return this.#s.mode;
  }
  saveEngineState(state: unknown): void {
    this.#s.engineState = structuredClone(state);
  }
  readPlan(): PlanFile | null {
    return this.#s.plan ? { ...this.#s.plan } : null;
  }
  writePlan(content: string, opts?: { editedByUser?: boolean }): PlanFile {
    this.#crash("writePlan", content);
    this.#s.plan = {
      path: this.facts.planPath,
      content,
      revision: (this.#s.plan?.revision ?? 0) + 1,
      edited_by_user: opts?.editedByUser ?? false,
    };
    this.#s.revisions = [...this.#s.revisions, this.#s.plan];
    return { ...this.#s.plan };
  }
  readPlanRevision(revision: number): PlanFile | null {
    const found = this.#s.revisions.find((r) => r.revision === revision);
    return found ? { ...found } : null;
  }
  readOverlay(path: string): string | null | undefined {
    return this.#s.overlay.has(path) ? this.#s.overlay.get(path)! : undefined;
  }
  writeOverlay(path: string, content: string | null): void {
    this.#crash("writeOverlay", { path, content });
    this.#s.overlay.set(path, content);
  }
  listOverlay(): string[] {
    return [...this.#s.overlay.keys()].sort();
  }
  openWait(wait: {
    kind: Pending["kind"];
    tool_use_id: string;
    input: Record<string, unknown>;
  }): void {
    this.#crash("openWait", wait);
    if (this.#s.wait !== null) throw new Error("memory port: a wait is already open");
    this.#s.wait = { ...structuredClone(wait), opened_at: new Date(this.#clock).toISOString() };
    this.#s.waited.add(wait.tool_use_id);
  }
  pendingWait(): Pending | null {
    return this.#s.wait ? structuredClone(this.#s.wait) : null;
  }
  partialAnswers(toolUseId: string): Record<string, string> {
    return { ...(this.#s.partial.get(toolUseId) ?? {}) };
  }
  closeWait(toolUseId: string): void {
    if (this.#s.wait?.tool_use_id === toolUseId) this.#s.wait = null;
  }
  addUsage(usage: Usage, costUsd: number | null): void {
    this.#s.usage = {
      input_tokens: this.#s.usage.input_tokens + usage.input_tokens,
      output_tokens: this.#s.usage.output_tokens + usage.output_tokens,
    };
    this.#s.cost = this.#s.cost === null || costUsd === null ? null : this.#s.cost + costUsd;
  }
  endSession(subtype: "error_during_execution" | "error_max_turns", message: string): void {
    if (this.hasEnded()) return;
    this.transaction(() => {
      this.appendEvents([
        { type: "result", subtype, is_error: true, num_turns: this.#turns(), message },
      ]);
      this.#s.wait = null;
      this.#s.ended = { subtype, message };
      this.#s.outcome ??= "terminated";
    });
  }
  finishExecution(): void {
    this.#s.finished = true;
  }
  recordCommandRun(run: CommandRun): void {
    this.commandRuns.push(run);
  }
  now(): number {
    return this.#clock;
  }

  // ---- What the session object does on user requests (for tests) ----

  /** The whole log, oldest first. */
  listEvents(): Event[] {
    return structuredClone(this.#s.events);
  }

  /** Moves the clock forward. */
  advance(ms: number): void {
    this.#clock += ms;
  }

  /** A user message (free text). */
  sendText(text: string): void {
    this.appendEvents([{ type: "user", message: { role: "user", content: text } }]);
  }

  /** Saves a subset of answers (the wait stays open). */
  answerPartially(toolUseId: string, answers: Record<string, string>): void {
    this.#s.partial.set(toolUseId, { ...this.partialAnswers(toolUseId), ...answers });
  }

  /** Answers the open question completely. */
  answer(toolUseId: string, answers: Record<string, string>): void {
    this.#requireWait(toolUseId, "question");
    this.transaction(() => {
      this.appendEvents([answersEvent(toolUseId, answers, "user")]);
      this.closeWait(toolUseId);
    });
  }

  /**
   * Decides the open ExitPlanMode as the session object does: judged by the session's rules
   * (a refusal throws, naming its code), its effects applied in one transaction. A terminal is
   * taken to be polling, so a teleport is never refused for want of one.
   */
  decide(
    toolUseId: string,
    decision:
      | { kind: "approve"; plan?: string; mode?: PermissionMode }
      | { kind: "reject"; feedback?: string; comments?: Comment[] }
      | { kind: "teleport"; plan?: string },
  ): void {
    const body: Decision = {
      tool_use_id: toolUseId,
      decision: decision.kind,
      plan: "plan" in decision ? decision.plan : undefined,
      permission_mode: "mode" in decision ? decision.mode : undefined,
      feedback: "feedback" in decision ? decision.feedback : undefined,
      comments: "comments" in decision ? decision.comments : undefined,
    };
    const judged = evaluateDecision(body, {
      sessionId: this.facts.id,
      planner: this.facts.planner,
      planPath: this.facts.planPath,
      prePlanMode: this.#prePlan,
      rejectCount: this.#s.rejectCount,
      ended: this.hasEnded(),
      earlier: this.#s.decisions.find((d) => d.tool_use_id === toolUseId)?.kind ?? null,
      wait: this.pendingWait(),
      plan: this.#s.plan?.content ?? null,
      nowMs: this.#clock,
      terminalPolledAt: this.#clock,
    });
    if (!judged.ok) throw new Error(`memory port: ${judged.error.code}: ${judged.error.message}`);
    const effects = judged.value;
    this.transaction(() => {
      this.#s.decisions.push({
        ...effects.record,
        decided_at: new Date(this.#clock).toISOString(),
      });
      if (effects.editedPlan !== null) this.writePlan(effects.editedPlan, { editedByUser: true });
      this.closeWait(toolUseId);
      this.appendEvents([effects.event]);
      const row = effects.row;
      if (row.permission_mode !== undefined) this.#s.mode = row.permission_mode;
      if (row.reject_count !== undefined) this.#s.rejectCount = row.reject_count;
      if (row.outcome_kind !== undefined) this.#s.outcome = row.outcome_kind;
      if (effects.next === "archive") this.archive();
    });
  }

  /** Archives the session as the session object does: one `result/archived` event, ever. */
  archive(): void {
    if (this.#s.archived) return;
    this.transaction(() => {
      this.#s.wait = null;
      this.appendEvents([
        { type: "result", subtype: "archived", is_error: false, num_turns: this.#turns() },
      ]);
      this.#s.archived = true;
      this.#s.outcome ??= "terminated";
    });
  }

  /** The AFK answer the engine would write, for comparisons. */
  expectedAfk(toolUseId: string): ToolResultBlock {
    return afkAnswersResult(toolUseId, this.partialAnswers(toolUseId));
  }

  get usage(): Usage {
    return { ...this.#s.usage };
  }
  /** The session's cost in dollars so far; null once a call's price was unknown. */
  get cost(): number | null {
    return this.#s.cost;
  }
  get ended(): { subtype: string; message: string } | null {
    return this.#s.ended;
  }
  get finished(): boolean {
    return this.#s.finished;
  }
  get archived(): boolean {
    return this.#s.archived;
  }
  get outcome(): OutcomeKind | null {
    return this.#s.outcome;
  }
  get rejectCount(): number {
    return this.#s.rejectCount;
  }
  get decisions(): PlanDecisionRecord[] {
    return structuredClone(this.#s.decisions);
  }

  #turns(): number {
    return modelTurns(this.#s.events);
  }

  #requireWait(toolUseId: string, kind: Pending["kind"]): void {
    if (this.#s.wait?.tool_use_id !== toolUseId || this.#s.wait.kind !== kind) {
      throw new Error(`memory port: no open ${kind} wait for ${toolUseId}`);
    }
  }

  #crash(op: Parameters<CrashHook>[0], detail: unknown): void {
    if (this.crashWhen?.(op, detail)) {
      this.crashWhen = null;
      throw new Error(`simulated crash during ${op}`);
    }
  }

  #copy(): State {
    return {
      ...this.#s,
      events: [...this.#s.events],
      engineState: structuredClone(this.#s.engineState),
      plan: this.#s.plan ? { ...this.#s.plan } : null,
      revisions: [...this.#s.revisions],
      overlay: new Map(this.#s.overlay),
      wait: this.#s.wait ? structuredClone(this.#s.wait) : null,
      waited: new Set(this.#s.waited),
      partial: new Map(this.#s.partial),
      decisions: structuredClone(this.#s.decisions),
      usage: { ...this.#s.usage },
    };
  }
}
