/**
 * Time limits for requests, as an AbortSignal backed by a plain timer.
 *
 * Not `AbortSignal.any([AbortSignal.timeout(ms), …])`: Node 20 holds the timeout signal weakly
 * inside `any`, so it can be garbage-collected before it fires and a request whose server
 * trickles its body never ends (issue 10, finding 4). A timer closure holds its controller
 * strongly until `clear()`.
 */

/** setTimeout fires at once for anything longer; such a limit is "never" in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TimeLimit {
  /** Aborts when the time is up or any parent aborts. */
  readonly signal: AbortSignal;
  /** True when it was the time, not a parent, that aborted. */
  timedOut(): boolean;
  /** Stops the timer and leaves the parents; call it when the limited work is done. */
  clear(): void;
}

/**
 * @example
 * const limit = abortAfter(30_000, [userSignal]);
 * try { const res = await fetch(url, { signal: limit.signal }); await res.text(); }
 * finally { limit.clear(); }
 */
export function abortAfter(
  ms: number,
  parents: readonly (AbortSignal | undefined)[] = [],
): TimeLimit {
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    ms <= MAX_TIMER_MS
      ? setTimeout(
          () => {
            if (controller.signal.aborted) return;
            timedOut = true;
            controller.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError"));
          },
          Math.max(0, ms),
        )
      : null;
  const linked: { parent: AbortSignal; onAbort: () => void }[] = [];
  for (const parent of parents) {
    if (!parent) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    const onAbort = () => controller.abort(parent.reason);
    parent.addEventListener("abort", onAbort, { once: true });
    linked.push({ parent, onAbort });
  }
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    clear() {
      if (timer) clearTimeout(timer);
      for (const { parent, onAbort } of linked) parent.removeEventListener("abort", onAbort);
    },
  };
}
