import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/protocol/index.ts";
import { cutNote, shortenEvent } from "../../src/session/events/log.ts";
import { MAX_STORED_JSON_CHARS } from "../../src/session/schema.ts";
import { ALICE, api, createDrivenSession, withPort } from "../support/worker/sessions.ts";

/**
 * An event too large for one SQLite row is stored shortened, with a note, instead of failing
 * the session (issue 10, finding 7: a 100,000-character prompt made the offline planner write
 * an event of 1,500,512 characters and the session died of it).
 */

const json = (value: unknown) => JSON.stringify(value).length;
const NOTE = /… \[(\d+) characters cut: too large to store\]$/;

/** The cut text is the original's beginning plus a note that counts what was cut. */
function expectCutFrom(original: string, cut: string): void {
  const note = NOTE.exec(cut);
  expect(note, "ends with the cut note").not.toBeNull();
  const kept = cut.slice(0, note!.index);
  expect(original.startsWith(kept)).toBe(true);
  expect(Number(note![1])).toBe(original.length - kept.length);
}

describe("shortening an event to fit", () => {
  it("returns an event that fits as it is (the same object)", () => {
    const event = { type: "user", message: { role: "user", content: "hello" } };
    expect(shortenEvent(event, 1_000)).toBe(event);
  });

  it("cuts an oversized user message to the limit exactly, keeping its beginning", () => {
    const content = "x".repeat(2_000_000);
    const event = { type: "user", message: { role: "user", content } };
    const short = shortenEvent(event, MAX_STORED_JSON_CHARS);
    expect(json(short)).toBeLessThanOrEqual(MAX_STORED_JSON_CHARS);
    expect(json(short)).toBeGreaterThan(MAX_STORED_JSON_CHARS - 100);
    expectCutFrom(content, short.message.content);
    expect(event.message.content).toBe(content); // the input is not changed
  });

  it("cuts the longest texts first and leaves the short ones whole", () => {
    const big = "r".repeat(1_600_000);
    const event = {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: big, is_error: false },
          { type: "text", text: "a short note" },
        ],
      },
    };
    const short = shortenEvent(event, 1_000_000);
    expect(json(short)).toBeLessThanOrEqual(1_000_000);
    const [result, text] = short.message.content;
    expectCutFrom(big, (result as { content: string }).content);
    expect(text).toEqual({ type: "text", text: "a short note" });
    expect(result).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1", is_error: false });
  });

  it("cuts several long texts to the same length, the longest losing most", () => {
    const a = "a".repeat(600_000);
    const b = "b".repeat(400_000);
    const event = {
      type: "assistant",
      message: {
        role: "assistant",
        content: [
          { type: "text", text: a },
          { type: "tool_use", id: "toolu_w", name: "Write", input: { file_path: "x", content: b } },
        ],
      },
    };
    const short = shortenEvent(event, 500_000);
    expect(json(short)).toBeLessThanOrEqual(500_000);
    const text = (short.message.content[0] as { text: string }).text;
    const use = short.message.content[1] as {
      id: string;
      name: string;
      input: Record<string, string>;
    };
    expectCutFrom(a, text);
    expectCutFrom(b, use.input.content!);
    expect(Math.abs(text.length - use.input.content!.length)).toBeLessThanOrEqual(2);
    // Names, ids and short input fields are never touched.
    expect(use).toMatchObject({ id: "toolu_w", name: "Write", input: { file_path: "x" } });
  });

  it("counts JSON escapes and never splits a surrogate pair", () => {
    const content = `${'"\\\n\u0001😀'.repeat(200_000)}`;
    const event = { type: "result", subtype: "error_during_execution", message: content };
    const short = shortenEvent(event, 300_000);
    expect(json(short)).toBeLessThanOrEqual(300_000);
    expectCutFrom(content, short.message);
    expect(short.message).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(short.subtype).toBe("error_during_execution");
  });

  it("keeps every event within the limit, cutting only texts, for any mix of texts", () => {
    const text = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc
        .tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 40_000 }))
        .map(([s, n]) => s.repeat(n)),
    );
    const block = fc.oneof(
      text.map((t) => ({ type: "text", text: t })),
      fc.tuple(text, fc.boolean()).map(([t, e]) => ({
        type: "tool_result",
        tool_use_id: "toolu_r",
        content: t,
        is_error: e,
      })),
      fc.tuple(text, text).map(([p, c]) => ({
        type: "tool_use",
        id: "toolu_u",
        name: "Edit",
        input: { old_string: p, nested: { new_string: c, list: [c, 7] } },
      })),
    );
    const event = fc.oneof(
      text.map((t) => ({ type: "user", message: { role: "user", content: t } })),
      fc
        .array(block, { minLength: 1, maxLength: 6 })
        .map((content) => ({ type: "assistant", message: { role: "assistant", content } })),
    );
    fc.assert(
      fc.property(event, fc.integer({ min: 4_000, max: 200_000 }), (e, max) => {
        const short = shortenEvent(e, max);
        if (json(e) <= max) expect(short).toBe(e);
        expect(json(short)).toBeLessThanOrEqual(max);
        // Same shape: every non-text value is unchanged; texts are kept or cut with the note.
        const compare = (before: unknown, after: unknown): void => {
          if (typeof before === "string") {
            if (after !== before) expectCutFrom(before, after as string);
            return;
          }
          if (before === null || typeof before !== "object") {
            expect(after).toBe(before);
            return;
          }
          expect(Object.keys(after as object)).toEqual(Object.keys(before));
          for (const k of Object.keys(before))
            compare((before as Record<string, unknown>)[k], (after as Record<string, unknown>)[k]);
        };
        compare(e, short);
        for (const key of ["type", "id", "name", "tool_use_id", "role"]) {
          const values = (x: unknown): unknown[] =>
            x !== null && typeof x === "object"
              ? Object.entries(x).flatMap(([k, v]) => (k === key ? [v] : values(v)))
              : [];
          expect(values(short)).toEqual(values(e));
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it("writes the note as the issue asks", () => {
    expect(cutNote(1234)).toBe("… [1234 characters cut: too large to store]");
  });
});

describe("the session's event log", () => {
  it("stores an oversized tool result shortened instead of failing, and the feed serves it", async () => {
    const session = await createDrivenSession(ALICE.token);
    const content = "y".repeat(2_000_000);
    const event: NewEvent = {
      type: "user",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_big", content, is_error: false }],
      },
    };
    const [stored] = await withPort(session.id, (port) =>
      port.transaction(() => port.appendEvents([event])),
    );
    expect(json(stored)).toBeLessThanOrEqual(MAX_STORED_JSON_CHARS);
    const events = await api.allEvents(ALICE, session.id);
    const served = events.at(-1)!;
    expect(served).toEqual(stored);
    expect(served).toMatchObject({ type: "user" });
    const block = (served as { message: { content: { content: string }[] } }).message.content[0]!;
    expectCutFrom(content, block.content);
  });
});
