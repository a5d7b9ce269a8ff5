import { describe, expect, it } from "vitest";
import { parentToolUseIdOf } from "../../src/protocol/index.ts";
import type { RecordedRequest } from "../client/anthropic-double-types.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { call, reply, SESSION_REQUEST, say } from "../support/provider-replies.ts";
import { anthropicLane } from "./planner/anthropic-lane.ts";
import { FAST_RETRY, runUntilStopped, shopFixture } from "./planner/helpers.ts";

/**
 * Prompt caching stays effective on Anthropic, measured: the Messages API TEST DOUBLE reports
 * the usage Anthropic's cache would give for each request (`simulate_usage`: the prefix up to
 * each `cache_control` mark is written; a later request reads the longest written prefix that
 * ends within 20 blocks before one of its marks). Anything unstable in the prefix — the
 * system prompt, the tool catalogue, an earlier message rebuilt differently — shows up here as
 * cache reads that fall short.
 */

const PLAN = "/plans/bold-eagle.md";
const EXPLORERS = ["EXPLORE-ONE", "EXPLORE-TWO", "EXPLORE-THREE"];

const total = (u: Record<string, number>) =>
  u.input_tokens! + u.cache_read_input_tokens! + u.cache_creation_input_tokens!;
const usageOf = (r: RecordedRequest) => r.simulated_usage!;

describe("prompt caching on the anthropic planner (Messages API double, simulated cache)", () => {
  it("reads each conversation's earlier turns and the shared subagent prefix from the cache", async () => {
    const r = (x: Parameters<typeof reply>[1]) =>
      reply("anthropic", { ...x, simulate_usage: true });
    const lane = await anthropicLane([
      r({
        match: SESSION_REQUEST,
        content: EXPLORERS.map((m, i) =>
          call(`toolu_x${i}`, "Task", { description: m, prompt: `${m}: report on src/billing.` }),
        ),
      }),
      ...EXPLORERS.flatMap((m, i) => [
        r({
          match: m,
          content: [call(`toolu_x${i}_read`, "Read", { file_path: "src/billing/invoice.ts" })],
        }),
        r({ match: m, content: [say(`${m} REPORT: invoiceTotal adds tax.`)] }),
      ]),
      r({
        match: SESSION_REQUEST,
        content: [call("toolu_w", "Write", { file_path: PLAN, content: "# Plan\n\n1. Round.\n" })],
      }),
      r({
        match: SESSION_REQUEST,
        content: [
          call("toolu_c", "Task", {
            description: "Critique",
            prompt: `CRITIQUE: read ${PLAN} and report gaps.`,
          }),
        ],
      }),
      r({ match: "CRITIQUE:", content: [say("CRITIQUE REPORT: add a test.")] }),
      r({ match: SESSION_REQUEST, content: [call("toolu_exit", "ExitPlanMode", {})] }),
    ]);
    const port = new MemoryPort({
      files: shopFixture(),
      facts: { planner: "anthropic", prompt: "Round invoice totals to cents", variant: "deep" },
    });
    expect(await runUntilStopped(port, { retry: FAST_RETRY }, 30, lane.env)).toEqual({
      next: "wait",
    });
    const sent = await lane.requests();

    // The session's own conversation: every request reads the whole previous request from the
    // cache (its prefix is byte-stable), and writes only what is new.
    const own = sent.filter((x) => x.matched === SESSION_REQUEST).map(usageOf);
    expect(own).toHaveLength(4);
    expect(own[0]!.cache_read_input_tokens).toBe(0);
    for (let i = 1; i < own.length; i++)
      expect(own[i]!.cache_read_input_tokens, `session request ${i}`).toBe(total(own[i - 1]!));

    // Each subagent's second turn reads its first turn's prefix.
    for (const m of EXPLORERS) {
      const [first, second] = sent.filter((x) => x.matched === m).map(usageOf);
      expect(second!.cache_read_input_tokens, m).toBe(total(first!));
    }

    // Across subagents: the system prompt and read-only tools are one prefix. Whichever
    // explorer arrived first wrote it; the other two, and later the critique, read it.
    const opening = EXPLORERS.map((m) => sent.filter((x) => x.matched === m)[0]!).sort(
      (a, b) => a.received_at - b.received_at,
    );
    const shared = usageOf(opening[1]!).cache_read_input_tokens!;
    expect(usageOf(opening[0]!).cache_read_input_tokens).toBe(0);
    expect(shared).toBeGreaterThan(1_000);
    expect(usageOf(opening[2]!).cache_read_input_tokens).toBe(shared);
    const critique = usageOf(sent.find((x) => x.matched === "CRITIQUE:")!);
    expect(critique.cache_read_input_tokens).toBe(shared);

    // Over the whole session, most input came from the cache; the engine stored the
    // provider's counts on each reply, subagents' included.
    const all = sent.map(usageOf);
    const read = all.reduce((n, u) => n + u.cache_read_input_tokens!, 0);
    const input = all.reduce((n, u) => n + total(u), 0);
    expect(read / input).toBeGreaterThan(0.5);
    const stored = port
      .listEvents()
      .flatMap((e) =>
        e.type === "assistant" ? [e.message.usage?.cache_read_input_tokens ?? 0] : [],
      );
    expect(stored.reduce((a, b) => a + b, 0)).toBe(read);
    expect(
      port.listEvents().filter((e) => e.type === "assistant" && parentToolUseIdOf(e) !== null),
    ).toHaveLength(7);
  });
});
