/**
 * How long a scan (Grep, Glob) may run, and how often it lets others run. A session's Durable
 * Object shares its isolate — one thread — with the worker's other requests and every other
 * session on it, so a loop that never awaits starves them all (healthz timed out for minutes
 * under one backtracking pattern). Scans therefore work in slices of about
 * {@link SLICE_TARGET_MS}, hand the event loop back between them, and stop at a wall-time
 * budget, answering with what they found so far.
 */

/** Wall time one Grep or Glob may take; then it answers with partial results and says so. */
export const SCAN_BUDGET_MS = 10_000;
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
 * A scan's clock. It counts work in characters, yields between slices and learns from each
 * slice how fast the work goes, so the next slice is sized to {@link SLICE_TARGET_MS}: a
 * literal search runs in slices of a MiB, a pathological pattern in slices of a few KiB. The
 * time is read after each yield (the Workers runtime advances its clock at I/O, timers
 * included), so the measure is right even where the clock stands still while code runs, and
 * time other requests took during the yield only makes the slices smaller.
 *
 * @example
 * const budget = new ScanBudget();
 * for (const file of files) {
 *   if (!(await budget.spend(file.text.length))) break; // time is up: answer what was found
 *   search(file);
 * }
 */
export class ScanBudget {
  readonly #startedAt: number;
  #resumedAt: number;
  #charsSinceYield = 0;
  #nsPerChar = CAUTIOUS_NS_PER_CHAR;
  #calibrated = false;
  #exhausted = false;

  constructor(
    private readonly budgetMs: number = SCAN_BUDGET_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.#startedAt = now();
    this.#resumedAt = this.#startedAt;
  }

  /** True once the budget ran out (the scan's answer is partial). */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /** True once a slice was measured (before that, slices are sized for the worst case). */
  get calibrated(): boolean {
    return this.#calibrated;
  }

  /** The budget in words, for the note a partial answer carries ("10 s"). */
  describe(): string {
    return `${this.budgetMs / 1000} s`;
  }

  /** Characters of work that fit in one slice at the speed measured so far. */
  sliceChars(): number {
    const fit = Math.floor((SLICE_TARGET_MS * 1_000_000) / this.#nsPerChar);
    return Math.min(MAX_SLICE_CHARS, Math.max(MIN_SLICE_CHARS, fit));
  }

  /**
   * Announces `chars` of work about to be done: yields first when they would overfill the
   * current slice. Resolves false when the budget is spent (then the work should not be done).
   */
  async spend(chars: number): Promise<boolean> {
    if (this.#exhausted) return false;
    const full = this.#charsSinceYield + chars > this.sliceChars();
    const late = this.now() - this.#resumedAt >= SLICE_TARGET_MS;
    if (this.#charsSinceYield > 0 && (full || late)) await this.pause();
    this.#charsSinceYield += chars;
    if (this.now() - this.#startedAt >= this.budgetMs) this.#exhausted = true;
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
