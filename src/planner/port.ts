import type {
  Event,
  NewEvent,
  Pending,
  PermissionMode,
  PlanDecisionRecord,
  PlanFile,
  ResolvedPlanner,
  RunResult,
  ScriptedTurn,
  Usage,
  Variant,
} from "../protocol/index.ts";
import type { SnapshotEntry, SnapshotFiles } from "../snapshot/files.ts";

/**
 * The one small interface between the planning engine and the session that hosts it.
 *
 * The session Durable Object implements it over its SQLite storage and the R2 snapshot; the
 * engine (`loop.ts`, the tools, the planners) sees nothing else of the session. Everything
 * synchronous here is a SQLite read or write inside the Durable Object; wrap related writes in
 * {@link SessionPort.transaction} so an event and the effect it reports land together (a
 * restart then never sees one without the other).
 */
export interface SessionPort {
  readonly facts: SessionFacts;
  readonly snapshot: SnapshotFiles;
  /**
   * Where the executing model's commands run (`Bash`, after approval); null when this
   * session's execution runs none (PLANPORT_EXECUTION=overlay). docs/EXECUTION.md.
   */
  readonly commands: SessionCommands | null;

  /** Runs `fn` as one SQLite transaction: all of its writes land, or none do. */
  transaction<T>(fn: () => T): T;

  /**
   * Everything a step starts from, in one read: the log is read and parsed once per step (the
   * step keeps its copy current with what {@link appendEvents} returns).
   */
  loadState(): SessionState;
  /** Whether the session has ended; a step asks again after each wait for the model or a tool. */
  hasEnded(): boolean;

  /** Appends events to the log (ids and times assigned here) and returns them as stored. */
  appendEvents(events: readonly NewEvent[]): Event[];

  /** `plan` while planning; the restored mode after an approval. */
  permissionMode(): PermissionMode;

  /** Stores the engine's own state (see {@link SessionState.engineState}). */
  saveEngineState(state: unknown): void;

  readPlan(): PlanFile | null;
  /** One stored revision of the plan file (1 is the first), or null when there is none. */
  readPlanRevision(revision: number): PlanFile | null;
  /** Writes a new revision of the plan file. */
  writePlan(content: string, opts?: { editedByUser?: boolean }): PlanFile;

  /** Overlay content: a string, `null` when the path was deleted, `undefined` when untouched. */
  readOverlay(path: string): string | null | undefined;
  writeOverlay(path: string, content: string | null): void;
  /** Paths touched by the overlay, sorted. */
  listOverlay(): string[];

  /**
   * Opens a wait (an AskUserQuestion or an ExitPlanMode): the session becomes
   * `requires_action` and the loop stops until a message or decision closes it.
   */
  openWait(wait: {
    kind: Pending["kind"];
    tool_use_id: string;
    input: Record<string, unknown>;
  }): void;
  /** The open wait, if any. */
  pendingWait(): Pending | null;
  /** Answers the user saved so far for the open question (AFK timeout answers with these). */
  partialAnswers(toolUseId: string): Record<string, string>;
  /** Closes the open wait (the engine answered it itself, e.g. the AFK timeout). */
  closeWait(toolUseId: string): void;

  /**
   * Counts one model call's tokens and what it cost in dollars (null: its price is unknown,
   * which makes the session's cost unknown from then on).
   */
  addUsage(usage: Usage, costUsd: number | null): void;

  /**
   * Ends the session: writes a `result` event with an ending subtype and a readable message,
   * records the outcome `terminated`, stops the loop.
   */
  endSession(subtype: "error_during_execution" | "error_max_turns", message: string): void;
  /** Marks remote execution finished (after approve): phase `done`, outcome stays approved. */
  finishExecution(): void;
  /** Records a command `Bash` ran (the Session's `last_test_run` is read from these). */
  recordCommandRun(run: CommandRun): void;

  /** Milliseconds since the epoch (a seam for tests of timing rules). */
  now(): number;
}

/** Runs commands over the session's workspace: the snapshot with the overlay's edits. */
export interface SessionCommands {
  /** What runs them, for sentences ("The local executor (Docker on this machine)"). */
  readonly where: string;
  /** Runs one command; throws with a sentence when the executor cannot run it. */
  run(command: string, timeoutMs: number): Promise<RunResult>;
}

/** One command `Bash` ran, as the session records it. */
export interface CommandRun {
  toolUseId: string;
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
}

/** The session as one step of the engine finds it. */
export interface SessionState {
  /** The whole log, oldest first (the engine rebuilds the model conversation from it). */
  events: Event[];
  /** Archived, teleported or ended with an error: nothing may run any more. */
  ended: boolean;
  mode: PermissionMode;
  /** The open wait, if any. */
  wait: Pending | null;
  /** Every call a wait was opened for, open or closed: their tool results are user input. */
  waitedCalls: ReadonlySet<string>;
  /** The decided ExitPlanMode calls, oldest first. */
  decisions: readonly PlanDecisionRecord[];
  /** The engine's own persisted state (reminder schedule, tool attempts…); null before the first step. */
  engineState: unknown;
}

/** What the session was created with; fixed for its life. */
export interface SessionFacts {
  id: string;
  title: string;
  prompt: string;
  /** The resolved planner (never `auto`). */
  planner: ResolvedPlanner;
  /** Virtual path of the single writable plan file, outside the repository tree. */
  planPath: string;
  /** Custom planning instructions (replace the middle of the workflow), or null. */
  instructions: string | null;
  /** The planning workflow: `simple`, `visual` (a diagram where it helps) or `deep` (subagents). */
  variant: Variant;
  /** AFK timeout for questions in seconds, or null when off. */
  askTimeoutS: number | null;
  maxTurns: number;
  /** Turns for the scripted planner. */
  script: ScriptedTurn[] | null;
  snapshotId: string | null;
  /**
   * The session started from a draft written elsewhere (`seed_plan`): the plan file's revision
   * 1, there before the first model call. Absent means false.
   */
  seeded?: boolean;
}

/**
 * The snapshot as the tools read it. Defined by the snapshot module (`src/snapshot/files.ts`,
 * a leaf that imports nothing), which implements it over R2; the planner only holds the type.
 */
export type { SnapshotEntry, SnapshotFiles };

/** What the hosting session does after a step. */
export type StepResult =
  /** More work now: schedule the next step immediately. */
  | { next: "continue" }
  /** Waiting for the user (an open question or plan); wake at `wakeAt` (AFK timeout) if set. */
  | { next: "wait"; wakeAt?: number }
  /** Nothing to do until a message arrives, or the session ended. */
  | { next: "idle" };

/** Bindings and vars the planners read (a subset of the worker's Env). */
export interface PlannerEnv {
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  ANTHROPIC_MODEL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  OPENAI_MODEL?: string;
  AI?: Ai;
  /**
   * Model calls (`models/retry-config.ts`): one attempt's timeout, attempts in total, first
   * backoff (all milliseconds but attempts); unset = the defaults.
   */
  PLANPORT_MODEL_TIMEOUT_MS?: string;
  PLANPORT_MODEL_ATTEMPTS?: string;
  PLANPORT_MODEL_BACKOFF_MS?: string;
  /** Context budget of every model conversation (tokens); unset = each model's own window. */
  PLANPORT_CONTEXT_TOKENS?: string;
  /** Prices per model (JSON, dollars per million tokens) over the built-in table. */
  PLANPORT_PRICES?: string;
}
