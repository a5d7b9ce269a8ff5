/**
 * TEST DOUBLE — an in-memory stand-in for the session Durable Object's `SessionPort`, for unit
 * tests of the planning engine before (and besides) the real object. It is NOT the product's
 * storage: the real port is SQLite inside the Durable Object. What it imitates faithfully is
 * what the engine relies on: transactions that roll back on a throw (so a "crash" in the middle
 * of one leaves no trace), append-only events with sortable ids, one open wait at a time, and
 * decisions/answers recorded together with their tool results (via the real `decisions.ts`).
 *
 * `crashWhen` injects a failure into a chosen write, to simulate a restart between two writes.
 */
import {
  afkAnswersResult,
  answersResult,
  type PlanDecision,
  planDecisionResult,
} from "../../src/planner/decisions.ts";
import type {
  SessionFacts,
  SessionPort,
  SnapshotEntry,
  SnapshotFiles,
} from "../../src/planner/port.ts";
import type {
  Comment,
  Event,
  NewEvent,
  Pending,
  PermissionMode,
  PlanFile,
  ToolResultBlock,
  Usage,
} from "../../src/protocol/index.ts";

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
  overlay: Map<string, string | null>;
  wait: Pending | null;
  partial: Map<string, Record<string, string>>;
  usage: Usage;
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
}

/** TEST DOUBLE of the session Durable Object's port. */
export class MemoryPort implements SessionPort {
  readonly facts: SessionFacts;
  readonly snapshot: SnapshotFiles & { scans: number };
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
      askTimeoutS: null,
      maxTurns: 50,
      script: null,
      snapshotId: opts.files ? "f".repeat(64) : null,
      ...opts.facts,
    };
    this.snapshot = memorySnapshot(opts.files ?? {});
    this.#prePlan = opts.prePlanMode ?? "default";
    this.#clock = opts.now ?? Date.UTC(2026, 0, 1);
    this.#s = {
      events: [],
      seq: 0,
      mode: "plan",
      engineState: null,
      plan: null,
      overlay: new Map(),
      wait: null,
      partial: new Map(),
      usage: { input_tokens: 0, output_tokens: 0 },
      ended: null,
      finished: false,
      archived: false,
    };
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
  listEvents(): Event[] {
    return structuredClone(this.#s.events);
  }
  permissionMode(): PermissionMode {
    return this.#s.mode;
  }
  prePlanMode(): PermissionMode {
    return this.#prePlan;
  }
  loadEngineState(): unknown {
    return structuredClone(this.#s.engineState);
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
    return { ...this.#s.plan };
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
  addUsage(usage: Usage): void {
    this.#s.usage = {
      input_tokens: this.#s.usage.input_tokens + usage.input_tokens,
      output_tokens: this.#s.usage.output_tokens + usage.output_tokens,
    };
  }
  endSession(subtype: "error_during_execution" | "error_max_turns", message: string): void {
    this.transaction(() => {
      this.appendEvents([{ type: "result", subtype, is_error: true, num_turns: 0, message }]);
      this.#s.ended = { subtype, message };
    });
  }
  finishExecution(): void {
    this.#s.finished = true;
  }
  now(): number {
    return this.#clock;
  }

  // ---- What the session object does on user requests (for tests) ----

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
      this.appendEvents([toolResult(answersResult(toolUseId, answers))]);
      this.closeWait(toolUseId);
    });
  }

  /** Decides the open ExitPlanMode the way the session object does (one transaction). */
  decide(
    toolUseId: string,
    decision:
      | { kind: "approve"; plan?: string; mode?: PermissionMode }
      | { kind: "reject"; feedback?: string; comments?: Comment[] }
      | { kind: "teleport" },
  ): void {
    this.#requireWait(toolUseId, "plan");
    const current = this.#s.plan?.content ?? "";
    this.transaction(() => {
      let d: PlanDecision;
      if (decision.kind === "approve") {
        if (decision.plan !== undefined) this.writePlan(decision.plan, { editedByUser: true });
        d = {
          kind: "approve",
          plan: decision.plan ?? current,
          editedByUser: decision.plan !== undefined,
          planPath: this.facts.planPath,
        };
        this.#s.mode = decision.mode ?? this.#prePlan;
      } else if (decision.kind === "reject") {
        d = {
          kind: "reject",
          feedback: decision.feedback ?? "",
          comments: decision.comments ?? [],
          planPath: this.facts.planPath,
        };
      } else d = { kind: "teleport", plan: current };
      this.appendEvents([toolResult(planDecisionResult(toolUseId, d))]);
      this.closeWait(toolUseId);
      if (decision.kind === "teleport") {
        this.#s.archived = true;
        this.appendEvents([{ type: "result", subtype: "archived", is_error: false, num_turns: 0 }]);
      }
    });
  }

  /** The AFK answer the engine would write, for comparisons. */
  expectedAfk(toolUseId: string): ToolResultBlock {
    return afkAnswersResult(toolUseId, this.partialAnswers(toolUseId));
  }

  get usage(): Usage {
    return { ...this.#s.usage };
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
      overlay: new Map(this.#s.overlay),
      wait: this.#s.wait ? structuredClone(this.#s.wait) : null,
      partial: new Map(this.#s.partial),
      usage: { ...this.#s.usage },
    };
  }
}

function toolResult(block: ToolResultBlock): NewEvent {
  return { type: "user", message: { role: "user", content: [block] } };
}
