import type {
  CommandRun,
  SessionCommands,
  SessionFacts,
  SessionPort,
  SessionState,
  SnapshotFiles,
} from "../planner/port.ts";
import type {
  Event,
  NewEvent,
  Pending,
  PermissionMode,
  PlanFile,
  ScriptedTurn,
  Usage,
} from "../protocol/index.ts";
import { recordCommandRun } from "./commands.ts";
import { listDecisions } from "./decisions/record.ts";
import {
  closeWait,
  openWait,
  partialAnswers,
  pendingWait,
  waitedCalls,
} from "./decisions/waits.ts";
import { appendEvents, listEvents, startedFromSeed } from "./events/log.ts";
import { listOverlay, readOverlay, writeOverlay } from "./files/overlay.ts";
import { readPlan, readPlanRevision, writePlan } from "./files/plan-file.ts";
import { endSession } from "./lifecycle.ts";
import {
  hasEnded,
  readRow,
  readSessionTexts,
  type SessionRow,
  type SessionTexts,
  updateRow,
} from "./session-row.ts";

/**
 * Thrown when the engine tries to change a session that has ended (archived, teleported, or
 * ended with an error) while its step was still running: nothing may happen after the end.
 */
export class SessionEndedError extends Error {
  constructor(sessionId: string) {
    super(`Session ${sessionId} has ended; the planning step stops without further effects.`);
    this.name = "SessionEndedError";
  }
}

/** The snapshot of a session created without one: no files. */
export const NO_SNAPSHOT: SnapshotFiles = {
  list: async () => [],
  read: async () => null,
  scan: async function* () {},
  scanBytes: async function* () {},
};

/**
 * The session Durable Object as the planning engine sees it ({@link SessionPort}): every
 * method is a synchronous SQLite read or write of this object's storage, except the snapshot.
 */
export class SessionPortAdapter implements SessionPort {
  readonly facts: SessionFacts;
  private readonly sql: SqlStorage;

  constructor(
    private readonly storage: DurableObjectStorage,
    readonly snapshot: SnapshotFiles,
    private readonly clock: () => number,
    private readonly retentionMs: number,
    /**
     * Records the webhook events of a change of phase or outcome (webhooks/outbox.ts
     * `announceChanges`), called right after each write that can make one, in its transaction.
     */
    private readonly announce: () => void = () => {},
    /** Where `Bash` runs after approval; null: this session runs no commands. */
    readonly commands: SessionCommands | null = null,
  ) {
    this.sql = storage.sql;
    const texts = readSessionTexts(this.sql);
    if (texts === null) throw new Error("This Durable Object holds no session.");
    this.facts = factsOf(this.row(), texts, startedFromSeed(this.sql));
  }

  transaction<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }

  loadState(): SessionState {
    const row = this.row();
    const engineState = readSessionTexts(this.sql)?.engine_state ?? null;
    return {
      events: listEvents(this.sql),
      ended: hasEnded(row),
      mode: row.permission_mode,
      wait: pendingWait(this.sql),
      waitedCalls: waitedCalls(this.sql),
      decisions: listDecisions(this.sql),
      engineState: engineState === null ? null : (JSON.parse(engineState) as unknown),
    };
  }

  hasEnded(): boolean {
    return hasEnded(this.row());
  }

  appendEvents(events: readonly NewEvent[]): Event[] {
    this.liveRow();
    const now = this.clock();
    const stored = appendEvents(this.sql, events, now);
    updateRow(this.sql, { updated_at: now });
    return stored;
  }

  permissionMode(): PermissionMode {
    return this.row().permission_mode;
  }

  saveEngineState(state: unknown): void {
    updateRow(this.sql, { engine_state: JSON.stringify(state) });
  }

  readPlan(): PlanFile | null {
    return readPlan(this.sql, this.facts.planPath);
  }

  readPlanRevision(revision: number): PlanFile | null {
    return readPlanRevision(this.sql, this.facts.planPath, revision);
  }

  writePlan(content: string, opts?: { editedByUser?: boolean }): PlanFile {
    this.liveRow();
    return writePlan(
      this.sql,
      this.facts.planPath,
      content,
      opts?.editedByUser ?? false,
      this.clock(),
    );
  }

  readOverlay(path: string): string | null | undefined {
    return readOverlay(this.sql, path);
  }

  writeOverlay(path: string, content: string | null): void {
    this.liveRow();
    writeOverlay(this.sql, path, content);
  }

  listOverlay(): string[] {
    return listOverlay(this.sql);
  }

  openWait(wait: {
    kind: Pending["kind"];
    tool_use_id: string;
    input: Record<string, unknown>;
  }): void {
    this.liveRow();
    const now = this.clock();
    openWait(this.sql, wait, now);
    updateRow(this.sql, { updated_at: now });
    this.announce();
  }

  pendingWait(): Pending | null {
    return pendingWait(this.sql);
  }

  partialAnswers(toolUseId: string): Record<string, string> {
    return partialAnswers(this.sql, toolUseId);
  }

  closeWait(toolUseId: string): void {
    const now = this.clock();
    closeWait(this.sql, toolUseId, now);
    updateRow(this.sql, { afk_due_at: null, updated_at: now });
    this.announce();
  }

  addUsage(usage: Usage, costUsd: number | null): void {
    // Recorded even after the end: the model call happened and was paid for. An unknown price
    // makes the total unknown (NULL) for good: a partial sum would look like a real one.
    this.sql.exec(
      `UPDATE session SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
        cost_usd = cost_usd + ?`,
      usage.input_tokens,
      usage.output_tokens,
      costUsd,
    );
  }

  endSession(subtype: "error_during_execution" | "error_max_turns", message: string): void {
    endSession(this.sql, this.row(), subtype, message, this.clock(), this.retentionMs);
    this.announce();
  }

  finishExecution(): void {
    updateRow(this.sql, { executed: 1, updated_at: this.clock() });
    this.announce();
  }

  recordCommandRun(run: CommandRun): void {
    this.liveRow();
    recordCommandRun(this.sql, run, this.clock());
  }

  now(): number {
    return this.clock();
  }

  private row(): SessionRow {
    const row = readRow(this.sql);
    if (row === null)
      throw new Error(
        "This Durable Object holds no session (it was never created, or it was purged).",
      );
    return row;
  }

  private liveRow(): SessionRow {
    const row = this.row();
    if (hasEnded(row)) throw new SessionEndedError(row.id);
    return row;
  }
}

function factsOf(row: SessionRow, texts: SessionTexts, seeded: boolean): SessionFacts {
  return {
    id: row.id,
    title: row.title,
    prompt: texts.prompt,
    planner: row.planner,
    planPath: row.plan_path,
    instructions: texts.instructions,
    variant: row.variant,
    askTimeoutS: row.ask_timeout_s,
    maxTurns: row.max_turns,
    script: texts.script === null ? null : (JSON.parse(texts.script) as ScriptedTurn[]),
    snapshotId: row.snapshot_id,
    seeded,
  };
}
