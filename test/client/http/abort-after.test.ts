import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { abortAfter, unlessAborted } from "../../../local-client/http/abort-after.ts";

/** The timer-backed time limit every request runs under (issue 10, finding 4). */

describe("abortAfter", () => {
  it("aborts when the time is up, and says it was the time", async () => {
    const limit = abortAfter(20);
    await new Promise((r) => setTimeout(r, 200));
    expect(limit.signal.aborted).toBe(true);
    expect(limit.timedOut()).toBe(true);
    expect((limit.signal.reason as Error).name).toBe("TimeoutError");
  });

  it("aborts with a parent, and then it was not the time", async () => {
    const parent = new AbortController();
    const limit = abortAfter(50, [undefined, parent.signal]);
    parent.abort(new Error("Ctrl-C"));
    await new Promise((r) => setTimeout(r, 150));
    expect(limit.signal.aborted).toBe(true);
    expect(limit.timedOut()).toBe(false);
    expect((limit.signal.reason as Error).message).toBe("Ctrl-C");
  });

  it("starts aborted under an aborted parent", () => {
    const parent = new AbortController();
    parent.abort();
    expect(abortAfter(1_000, [parent.signal]).signal.aborted).toBe(true);
  });

  it("after clear() neither the timer nor a parent aborts it", async () => {
    const parent = new AbortController();
    const limit = abortAfter(20, [parent.signal]);
    limit.clear();
    parent.abort();
    await new Promise((r) => setTimeout(r, 150));
    expect(limit.signal.aborted).toBe(false);
  });

  it("a limit longer than a timer can hold never fires early", async () => {
    const limit = abortAfter(2 ** 31 + 1_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(limit.signal.aborted).toBe(false);
    limit.clear();
  });
});

/** The race that makes an await end with its signal (docs/DESIGN.md "The client's requests"). */
describe("unlessAborted", () => {
  it("answers what the promise answers, and leaves no listener on the signal", async () => {
    const controller = new AbortController();
    expect(await unlessAborted(Promise.resolve(42), controller.signal)).toBe(42);
    const err = new Error("network");
    await expect(unlessAborted(Promise.reject(err), controller.signal)).rejects.toBe(err);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("rejects with the signal's reason when it aborts first, though the promise never settles", async () => {
    const controller = new AbortController();
    const never = new Promise<never>(() => {});
    const raced = unlessAborted(never, controller.signal);
    const reason = new Error("the group chose another session");
    controller.abort(reason);
    await expect(raced).rejects.toBe(reason);
  });

  it("rejects at once under a signal that has aborted already, and swallows the promise's own later failure", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped");
    controller.abort(reason);
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("late")), 10));
    await expect(unlessAborted(late, controller.signal)).rejects.toBe(reason);
    // An unhandled rejection of `late` would fail this file.
    await new Promise((r) => setTimeout(r, 50));
  });

  it("without a signal is the promise itself", () => {
    const p = Promise.resolve("x");
    expect(unlessAborted(p, undefined)).toBe(p);
  });
});
