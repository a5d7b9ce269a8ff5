import { describe, expect, it } from "vitest";
import { step } from "../../src/planner/loop.ts";
import { sleep } from "../../src/planner/models/retry.ts";
import { ModelCallError, type ModelTurn, type Planner } from "../../src/planner/models/types.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { anthropicLane } from "./planner/anthropic-lane.ts";
import { assistantEvents, FAST_RETRY, shopFixture } from "./planner/helpers.ts";

describe("model failures", () => {
  function flaky(failures: ModelCallError[], then: ModelTurn): Planner & { calls: number } {
    const planner = {
      name: "anthropic" as const,
      canExecuteRemotely: true,
      calls: 0,
      async next(): Promise<ModelTurn> {
        const failure = failures[planner.calls++];
        if (failure) throw failure;
        return then;
      },
    };
    return planner;
  }
  const reply: ModelTurn = {
    content: [{ type: "text", text: "hello" }],
    usage: { input_tokens: 1, output_tokens: 1 },
  };

  it("retries transient failures (429, 529, network) and carries on", async () => {
    const port = new MemoryPort({ files: shopFixture() });
    const planner = flaky(
      [
        new ModelCallError("HTTP 429", true, { status: 429, retryAfterMs: 5 }),
        new ModelCallError("HTTP 529 overloaded", true, { status: 529 }),
        new ModelCallError("could not reach", true),
      ],
      reply,
    );
    expect(await step(port, {}, { planner, retry: FAST_RETRY })).toEqual({ next: "idle" });
    expect(planner.calls).toBe(4);
    expect(port.ended).toBeNull();
    expect(assistantEvents(port.listEvents())).toHaveLength(1);
  });

  it("ends the session with error_during_execution and a readable message when retries run out", async () => {
    const port = new MemoryPort({ files: shopFixture() });
    const always = Array.from(
      { length: 10 },
      () =>
        new ModelCallError(
          "The Anthropic API answered HTTP 529: overloaded_error: Overloaded.",
          true,
          { status: 529 },
        ),
    );
    const planner = flaky(always, reply);
    expect(await step(port, {}, { planner, retry: { ...FAST_RETRY, attempts: 3 } })).toEqual({
      next: "idle",
    });
    expect(planner.calls).toBe(3);
    expect(port.ended?.subtype).toBe("error_during_execution");
    expect(port.ended?.message).toContain("failed after 3 attempts");
    expect(port.ended?.message).toContain("overloaded_error: Overloaded");
    expect(assistantEvents(port.listEvents())).toHaveLength(0);
  });

  it("does not retry a permanent failure such as a refused key", async () => {
    const port = new MemoryPort({ files: shopFixture() });
    const planner = flaky(
      [
        new ModelCallError("The Anthropic API answered HTTP 401. Check ANTHROPIC_API_KEY.", false, {
          status: 401,
        }),
      ],
      reply,
    );
    await step(port, {}, { planner, retry: FAST_RETRY });
    expect(planner.calls).toBe(1);
    expect(port.ended?.message).toContain(
      "failed after 1 attempt: The Anthropic API answered HTTP 401. Check ANTHROPIC_API_KEY.",
    );
  });

  it("treats a call that never answers as transient and gives up after the attempts", async () => {
    const port = new MemoryPort({ files: shopFixture() });
    let calls = 0;
    const hanging: Planner = {
      name: "openai",
      canExecuteRemotely: true,
      next: (request) =>
        new Promise((_, reject) => {
          calls++;
          request.signal?.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    };
    await step(
      port,
      {},
      { planner: hanging, retry: { ...FAST_RETRY, attempts: 2, callTimeoutMs: 20 } },
    );
    expect(calls).toBe(2);
    expect(port.ended?.message).toContain("did not answer within");
  });
});

describe("retry-after from the provider, over HTTP (Anthropic test double)", () => {
  const apiError = (type: string, message: string) => ({ type: "error", error: { type, message } });
  const rateLimited = (seconds: number) => ({
    status: 429,
    headers: { "retry-after": String(seconds) },
    body: apiError("rate_limit_error", "Number of request tokens has exceeded your rate limit."),
  });
  const answer = {
    status: 200,
    body: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [{ type: "text", text: "Done." }],
      stop_reason: "end_turn",
      usage: { input_tokens: 3, output_tokens: 1 },
    },
  };
  const anthropicSession = () =>
    new MemoryPort({ files: shopFixture(), facts: { planner: "anthropic" } });

  it("a 429 with retry-after on the last attempt fails at once", async () => {
    const { env, requests } = await anthropicLane([
      { status: 529, body: apiError("overloaded_error", "Overloaded") },
      rateLimited(30),
    ]);
    const port = anthropicSession();
    const waited: number[] = [];
    const sleep = async (ms: number) => void waited.push(ms);
    const next = await step(port, env, {
      retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 5, sleep },
    });
    // The last attempt's retry-after (30 s) is never waited out (the 529's backoff is not a
    // retry-after, so it is not recorded here).
    expect(waited).toEqual([]);
    expect(next).toEqual({ next: "idle" });
    expect(port.ended?.subtype).toBe("error_during_execution");
    expect(port.ended?.message).toContain("failed after 2 attempts");
    expect(port.ended?.message).toContain("rate limit");
    expect(await requests()).toHaveLength(2);
  });

  it("waits the retry-after instead of the backoff, not on top of it", async () => {
    const { env, requests } = await anthropicLane([rateLimited(1), answer]);
    const port = anthropicSession();
    const waited: number[] = [];
    // The backoff (60 s) would show in `waited` if it were slept as well.
    const retry = {
      minDelayMs: 60_000,
      maxDelayMs: 60_000,
      sleep: async (ms: number) => void waited.push(ms),
    };
    expect(await step(port, env, { retry })).toEqual({ next: "idle" });
    expect(waited).toEqual([1_000]);
    expect(port.ended).toBeNull();
    expect(assistantEvents(port.listEvents())).toHaveLength(1);
    expect(await requests()).toHaveLength(2);
  });

  it("stops waiting out a retry-after as soon as the step is aborted", async () => {
    const { env, requests } = await anthropicLane([rateLimited(30), answer]);
    const port = anthropicSession();
    const stop = new AbortController();
    // The real sleep, watched: how each wait ended (its time run out, or the abort).
    const waits: { ms: number; ended: "slept" | "aborted" | null }[] = [];
    const watchedSleep = async (ms: number, signal?: AbortSignal) => {
      const wait = { ms, ended: null as "slept" | "aborted" | null };
      waits.push(wait);
      // The worker shuts down while the step waits out the retry-after.
      queueMicrotask(() => stop.abort(new Error("the worker is shutting down")));
      try {
        await sleep(ms, signal);
        wait.ended = "slept";
      } catch (error) {
        wait.ended = "aborted";
        throw error;
      }
    };
    expect(
      await step(port, env, { retry: { attempts: 2, sleep: watchedSleep }, signal: stop.signal }),
    ).toEqual({ next: "idle" });
    // The 30 s wait was begun and ended by the abort, not by its time running out.
    expect(waits).toEqual([{ ms: 30_000, ended: "aborted" }]);
    expect(port.ended?.message).toContain("the worker is shutting down");
    expect(await requests()).toHaveLength(1);
  });
});
