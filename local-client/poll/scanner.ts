import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  type DecisionKind,
  type Event,
  parentToolUseIdOf,
  TELEPORT_SENTINEL,
  type ToolResultBlock,
  toolResultText,
} from "../../src/protocol/index.ts";

/**
 * The ExitPlanMode classifier: reads the event feed of a remote planning session and says what
 * happened to the plan. Pure — no I/O, no timers — so it can be fed synthetic or recorded
 * events; the poller (`poller.ts`) is the only place that fetches, sleeps and counts failures.
 */

/** What one batch of events meant for the plan (docs/PROTOCOL.md "Local client library"). */
export type ScanResult =
  | { kind: "approved"; plan: string }
  | { kind: "teleport"; plan: string }
  /** `id` is the tool_use id of the ExitPlanMode call the user rejected. */
  | { kind: "rejected"; id: string }
  | { kind: "pending" }
  /** `message` is the session's own sentence about why it ended, when it gave one. */
  | { kind: "terminated"; subtype: string; message?: string }
  | { kind: "unchanged" };

/** Everything a scanner needs to carry on where another left off (saved by `attach`). */
export interface ScannerState {
  rejectCount: number;
  /** tool_use ids of ExitPlanMode calls seen without a decision yet, oldest first. */
  openPlanCalls: string[];
  everSeenPending: boolean;
}

/** Thrown by {@link ExitPlanModeScanner.ingest} for an approval or teleport whose plan cannot be read. */
export class MarkerMissingError extends Error {
  constructor(
    readonly toolUseId: string,
    readonly markers: readonly string[] = APPROVED_MARKERS,
  ) {
    super(markerMissingText(toolUseId, markers));
    this.name = "MarkerMissingError";
  }
}

/** The sentence of a {@link MarkerMissingError}, for whoever reports it from its data. */
export function markerMissingText(toolUseId: string, markers: readonly string[]): string {
  return (
    `ExitPlanMode call ${toolUseId} was answered, but its tool result has no line ` +
    `${markers.map((m) => `"${m}"`).join(" or ")}; the plan cannot be extracted`
  );
}

/**
 * Why this order: one batch can hold an approval and, later, the session's end (a teleport is
 * followed by `result/archived`; an approved run may crash right after). The approval really
 * happened, so it wins over the end. An end beats a rejection because nothing more can follow
 * it; a rejection beats a new pending call because the count must be reported even when the
 * model already re-submitted in the same batch.
 */
const PRECEDENCE: Record<ScanResult["kind"], number> = {
  approved: 5,
  teleport: 5,
  terminated: 4,
  rejected: 3,
  pending: 2,
  unchanged: 1,
};

/**
 * The stronger of two results under the precedence of docs/PROTOCOL.md; on a tie the earlier
 * one stays (the first decision in the stream is the one that happened).
 *
 * @example
 * strongest({ kind: "terminated", subtype: "archived" }, { kind: "teleport", plan: "p" }).kind
 * // → "teleport"
 */
export function strongest(a: ScanResult, b: ScanResult): ScanResult {
  return PRECEDENCE[b.kind] > PRECEDENCE[a.kind] ? b : a;
}

/** True for results after which the poll is over (the plan has a verdict or the session ended). */
export function isFinal(result: ScanResult): boolean {
  return result.kind === "approved" || result.kind === "teleport" || result.kind === "terminated";
}

/**
 * Classifies ExitPlanMode outcomes from event batches, in time linear in the events ingested.
 *
 * @example
 * const scanner = new ExitPlanModeScanner();
 * const result = scanner.ingest(page.data);
 * if (result.kind === "approved") console.log(result.plan);
 * console.log(scanner.rejectCount, scanner.hasPendingPlan);
 */
export class ExitPlanModeScanner {
  #rejectCount = 0;
  #everSeenPending = false;
  /**
   * Tracked by tool_use id rather than "the last call" because a rejection and the model's next
   * ExitPlanMode can arrive in one batch: each call is decided by its own tool_result, so every
   * rejection is counted exactly once whatever the batching.
   */
  readonly #openPlanCalls = new Set<string>();

  /** Continues from a state saved by {@link ExitPlanModeScanner.state} (e.g. after Ctrl-C). */
  static restore(state: ScannerState): ExitPlanModeScanner {
    const scanner = new ExitPlanModeScanner();
    scanner.#rejectCount = state.rejectCount;
    scanner.#everSeenPending = state.everSeenPending || state.openPlanCalls.length > 0;
    for (const id of state.openPlanCalls) scanner.#openPlanCalls.add(id);
    return scanner;
  }

  get rejectCount(): number {
    return this.#rejectCount;
  }

  /** An ExitPlanMode call is waiting for the user's decision. */
  get hasPendingPlan(): boolean {
    return this.#openPlanCalls.size > 0;
  }

  /** A plan was submitted for review at some point (decides timeout_pending vs timeout_no_plan). */
  get everSeenPending(): boolean {
    return this.#everSeenPending;
  }

  /** A plain copy of the state, for saving next to the poll cursor. */
  state(): ScannerState {
    return {
      rejectCount: this.#rejectCount,
      openPlanCalls: [...this.#openPlanCalls],
      everSeenPending: this.#everSeenPending,
    };
  }

  /**
   * Reads one batch (in feed order) and returns its strongest result. Throws
   * {@link MarkerMissingError} for an approval without a marker: guessing the plan from other
   * text would hand the user something they never approved.
   */
  ingest(events: readonly Event[]): ScanResult {
    let result: ScanResult = UNCHANGED;
    for (const event of events) result = this.#read(event, result);
    if (this.hasPendingPlan) result = strongest(result, PENDING);
    return result;
  }

  /**
   * Folds one event into `result`. A subagent's events (a `deep` session's explorers) belong to
   * its Task call, not to the session: an ExitPlanMode or a result inside one never decides the
   * plan (CONTRACT "Extensions: Events"). That is checked only where the event would otherwise
   * change something — a new ExitPlanMode call, the tool result of an open one, an ending result
   * — rather than on every event: most events are research, and a read of a property the event
   * lacks is among the dearest things this loop does (issue 34: it halved the throughput).
   */
  #read(event: Event, result: ScanResult): ScanResult {
    const type = event.type;
    if (type === "assistant") {
      for (const block of event.message.content) {
        if (block.type === "tool_use" && block.name === "ExitPlanMode" && isSessionOwn(event)) {
          this.#openPlanCalls.add(block.id);
          this.#everSeenPending = true;
        }
      }
      return result;
    }
    if (type === "user") {
      // No call open: no tool result can decide anything (read nothing more of the event).
      if (this.#openPlanCalls.size === 0) return result;
      const content = event.message.content;
      if (typeof content === "string") return result;
      for (const block of content) {
        if (block.type !== "tool_result") continue;
        // Results of other tools (Read, AskUserQuestion…) say nothing about the plan.
        if (!this.#openPlanCalls.has(block.tool_use_id) || !isSessionOwn(event)) continue;
        this.#openPlanCalls.delete(block.tool_use_id);
        const said = event.decision?.tool_use_id === block.tool_use_id ? event.decision.kind : null;
        result = strongest(result, this.#decide(block, said));
      }
      return result;
    }
    if (type === "result") {
      // `success` only ends a turn (the session waits for a question, a review or a message and
      // lives on); treating it as the end would abandon every plan still under review.
      // Every other subtype (error_during_execution, error_max_turns, archived, or one added
      // later) ends the session: failing closed beats polling a dead session for 30 minutes.
      if (event.subtype === "success" || !isSessionOwn(event)) return result;
      return strongest(
        result,
        event.message === undefined
          ? { kind: "terminated", subtype: event.subtype }
          : { kind: "terminated", subtype: event.subtype, message: event.message },
      );
    }
    return result;
  }

  /**
   * `said` is the verdict the event states as data (planport's feed); without it (a feed from
   * another server) the verdict is read from the markers. Either way the plan is the text after
   * the marker line, which the server writes before anything a person or a model wrote (and it
   * neutralises markers inside such text).
   */
  #decide(block: ToolResultBlock, said: DecisionKind | null): ScanResult {
    const text = toolResultText(block.content);
    const verdict = said ?? verdictFromMarkers(block.is_error === true, text);
    if (verdict === "reject") {
      this.#rejectCount += 1;
      return { kind: "rejected", id: block.tool_use_id };
    }
    const markers = verdict === "teleport" ? TELEPORT_MARKERS : APPROVED_MARKERS;
    const plan = textAfterMarkerLine(text, markers);
    if (plan === null) throw new MarkerMissingError(block.tool_use_id, markers);
    return verdict === "teleport" ? { kind: "teleport", plan } : { kind: "approved", plan };
  }
}

const UNCHANGED: ScanResult = Object.freeze({ kind: "unchanged" });
const PENDING: ScanResult = Object.freeze({ kind: "pending" });

/** True for the session's own events, false for a subagent's (see {@link parentToolUseIdOf}). */
function isSessionOwn(event: Event): boolean {
  return parentToolUseIdOf(event) === null;
}

/** A Claude-compatible feed: an error result is a teleport only with the sentinel line. */
function verdictFromMarkers(isError: boolean, text: string): DecisionKind {
  if (!isError) return "approve";
  return textAfterMarkerLine(text, TELEPORT_MARKERS) === null ? "reject" : "teleport";
}

const TELEPORT_MARKERS: readonly string[] = [TELEPORT_SENTINEL];
const APPROVED_MARKERS: readonly string[] = [APPROVED_PLAN_MARKER, APPROVED_PLAN_EDITED_MARKER];

/**
 * The text after the first line that is exactly one of `markers`, or null when there is none.
 * A whole line, not a substring: the worker writes each marker on a line of its own (after an
 * explanation for the model), so a marker quoted inside a sentence never counts. The plan is
 * everything after that line, kept exactly (an empty plan stays empty).
 */
function textAfterMarkerLine(text: string, markers: readonly string[]): string | null {
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd).replace(/\r$/, "");
    if (markers.includes(line)) return newline === -1 ? "" : text.slice(newline + 1);
    if (newline === -1) return null;
    lineStart = newline + 1;
  }
  return null;
}
