/**
 * Time limits for requests, as an AbortSignal backed by a plain timer, and the one way an await
 * that ignores its signal is made to end with it ({@link unlessAborted}).
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
 * try {
 *   const res = await fetch(url, { signal: limit.signal });
 *   const bytes = await readBodyAtMost(res, 1024 * 1024, limit.signal);
 * } finally { limit.clear(); }
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

/**
 * `promise`, unless `signal` aborts first: then a rejection with the signal's reason, at once.
 * For awaits that do not themselves end when their signal does, such as a fetch body's
 * `reader.read()` on Node 20 (docs/DESIGN.md "The client's requests"). `promise` is not
 * cancelled; stop whatever it waits on separately (cancel the reader).
 *
 * @example
 * const { done, value } = await unlessAborted(reader.read(), limit.signal);
 */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
