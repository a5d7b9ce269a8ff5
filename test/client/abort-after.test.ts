import { describe, expect, it } from "vitest";
import { abortAfter } from "../../local-client/abort-after.ts";

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
