import type { ResolvedPlanner } from "../../protocol/index.ts";
import { SNAPSHOT_MAX_UNCOMPRESSED_BYTES } from "../../protocol/index.ts";

/**
 * How long a scan (Grep, Glob) may run, and how often it lets others run. A session's Durable
 * Object shares its isolate — one thread — with the worker's other requests and every other
 * session on it, so a loop that never awaits starves them all (healthz timed out for minutes
 * under one backtracking pattern). Scans therefore work in slices of about
 * {@link SLICE_TARGET_MS}, hand the event loop back between them, and stop at a limit,
 * answering with what they found so far.
 *
 * The limit is one of two kinds. A model's patterns are its own choice (a prompt-injected README
 * can choose them), so its scans stop at a wall-time budget: nothing it writes can hold the
 * worker longer. The offline planner's patterns are ours — escaped literals in fixed shapes,
 * each ruled out of most files by `indexOf` — and its plan must not depend on how fast the
 * worker happens to be (a plan is the same for the same task and tree, on a fresh worker or a
 * slow, busy one), so its scans count work instead: the characters of the files they search,
 * against a limit every snapshot fits in. How often a scan yields is still measured in time;
 * that decides only when others run, never what the scan finds.
 */

/** What stops a scan: wall time (a model's patterns) or work done (the offline planner's). */
export type ScanLimit = { kind: "time"; ms: number } | { kind: "work"; chars: number };

/** Wall time one Grep or Glob may take; then it answers with partial results and says so. */
export const SCAN_BUDGET_MS = 10_000;
/**
 * Characters one offline planner scan may search: every snapshot fits (its text is at most
 * {@link SNAPSHOT_MAX_UNCOMPRESSED_BYTES} bytes, and a character is at least a byte), so the
 * limit is reached only by a tree the snapshot rules would refuse — and then at the same file
 * on every run.
 */
export const WORK_BUDGET_CHARS = SNAPSHOT_MAX_UNCOMPRESSED_BYTES;
/**
 * Characters of one line a work-limited scan searches; the rest of a longer line (minified
 * code, data) is not searched, and the answer says so. Fixed, so the cut never moves with the
 * machine's speed (a time-limited scan sizes it by the speed it measured).
 */
export const WORK_LONG_LINE_CHARS = 65_536;

/** Work a scan does between two yields to the event loop, in ms. */
export const SLICE_TARGET_MS = 20;
/**
 * Time one character of work is assumed to take before any slice was measured: the slowest
 * pattern Grep accepts on the text that suits it worst (RE2's NFA, ~7 µs per character
 * measured), rounded up.
 */
const CAUTIOUS_NS_PER_CHAR = 10_000;
const MIN_SLICE_CHARS = 1_024;
const MAX_SLICE_CHARS = 1_048_576;
/**
 * Slices of work one line may take under a time limit (about 80 ms); a longer line is searched
 * in its beginning only, which a match in a minified file rarely needs more than.
 */
const LONG_LINE_SLICES = 4;

/** The limit of a wall-time scan (a model's call). */
export const TIME_LIMIT: ScanLimit = { kind: "time", ms: SCAN_BUDGET_MS };
/** The limit of a work-counted scan (the offline planner's call). */
export const WORK_LIMIT: ScanLimit = { kind: "work", chars: WORK_BUDGET_CHARS };

/**
 * The limit of the scans a session's planner asks for: counted work for the offline planner
 * (deterministic), wall time for every planner whose patterns a model chooses.
 *
 * @example
 * scanLimitFor("offline") // { kind: "work", chars: 104857600 }
 * scanLimitFor("anthropic") // { kind: "time", ms: 10000 }
 */
export function scanLimitFor(planner: ResolvedPlanner): ScanLimit {
  return planner === "offline" ? WORK_LIMIT : TIME_LIMIT;
}

/**
 * A scan's clock and meter. It counts work in characters, yields between slices and learns from
 * each slice how fast the work goes, so the next slice is sized to {@link SLICE_TARGET_MS}: a
 * literal search runs in slices of a MiB, a pathological pattern in slices of a few KiB. The
 * time is read after each yield (the Workers runtime advances its clock at I/O, timers
 * included), so the measure is right even where the clock stands still while code runs, and
 * time other requests took during the yield only makes the slices smaller.
 *
 * Under a time limit, {@link spend} answers false once the wall time is up. Under a work limit,
 * {@link admit} answers false for the file whose characters would pass it, and nothing the
 * clock says changes what the scan searches.
 *
 * @example
 * const budget = new ScanBudget(TIME_LIMIT);
 * for (const file of files) {
 *   if (!budget.admit(file.text.length)) break; // work limit: this file and the rest unsearched
 *   if (!(await budget.spend(file.text.length))) break; // time is up: answer what was found
 *   search(file);
 * }
 */
export class ScanBudget {
  readonly #startedAt: number;
  #resumedAt: number;
  #charsSinceYield = 0;
  #charsAdmitted = 0;
  #nsPerChar = CAUTIOUS_NS_PER_CHAR;
  #calibrated = false;
  #exhausted = false;

  constructor(
    private readonly limit: ScanLimit = TIME_LIMIT,
    private readonly now: () => number = Date.now,
  ) {
    this.#startedAt = now();
    this.#resumedAt = this.#startedAt;
  }

  /** True once the limit was reached (the scan's answer is partial). */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /**
   * True when the long-line cut still waits for a measured slice (a time-limited scan before
   * its first measure); a work-limited scan's cut is fixed.
   */
  get calibrating(): boolean {
    return this.limit.kind === "time" && !this.#calibrated;
  }

  /** The limit in words, for the note a partial answer carries ("time limit of 10 s"). */
  describe(): string {
    return this.limit.kind === "time"
      ? `time limit of ${this.limit.ms / 1000} s`
      : `work limit of ${this.limit.chars.toLocaleString("en-US")} characters`;
  }

  /** Characters of work that fit in one slice at the speed measured so far. */
  sliceChars(): number {
    const fit = Math.floor((SLICE_TARGET_MS * 1_000_000) / this.#nsPerChar);
    return Math.min(MAX_SLICE_CHARS, Math.max(MIN_SLICE_CHARS, fit));
  }

  /**
   * Characters of one line searched before the rest is skipped: {@link LONG_LINE_SLICES}
   * slices at the measured speed under a time limit, {@link WORK_LONG_LINE_CHARS} under a
   * work limit.
   */
  longLineChars(): number {
    return this.limit.kind === "work" ? WORK_LONG_LINE_CHARS : this.sliceChars() * LONG_LINE_SLICES;
  }

  /**
   * Counts a file of `chars` characters the scan is about to search. False under a work limit
   * when it would pass the limit (then neither it nor the files after it are searched); always
   * true under a time limit.
   */
  admit(chars: number): boolean {
    if (this.limit.kind !== "work") return true;
    if (this.#exhausted || this.#charsAdmitted + chars > this.limit.chars) {
      this.#exhausted = true;
      return false;
    }
    this.#charsAdmitted += chars;
    return true;
  }

  /**
   * Announces `chars` of work about to be done: yields first when they would overfill the
   * current slice. Resolves false when the time limit is spent (then the work should not be
   * done); under a work limit it only yields.
   */
  async spend(chars: number): Promise<boolean> {
    if (this.#exhausted) return false;
    const full = this.#charsSinceYield + chars > this.sliceChars();
    const late = this.now() - this.#resumedAt >= SLICE_TARGET_MS;
    if (this.#charsSinceYield > 0 && (full || late)) await this.pause();
    this.#charsSinceYield += chars;
    if (this.limit.kind === "time" && this.now() - this.#startedAt >= this.limit.ms)
      this.#exhausted = true;
    return !this.#exhausted;
  }

  /** Yields to the event loop now and measures the slice that ends here. */
  async pause(): Promise<void> {
    await yieldToEventLoop();
    const now = this.now();
    if (this.#charsSinceYield > 0) {
      // A clock that shows no time passing still bounds the speed: at most a slice per ms.
      const elapsedMs = Math.max(1, now - this.#resumedAt);
      this.#nsPerChar = (elapsedMs * 1_000_000) / this.#charsSinceYield;
      this.#calibrated = true;
    }
    this.#charsSinceYield = 0;
    this.#resumedAt = now;
  }
}

/**
 * Lets queued requests and timers run before continuing (a macrotask, not a microtask: a
 * resolved promise would keep the thread).
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
