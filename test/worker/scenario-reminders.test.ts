import { describe, expect, it } from "vitest";
import type { ModelMessage, ModelRequest } from "../../src/planner/models/types.ts";
import { isReminderText, reminderText } from "../../src/planner/plan-mode/prompts.ts";
import { ALICE, api } from "../support/worker/sessions.ts";
import { settled, startRecorded, turn, use } from "./scenario/support.ts";

/**
 * The plan-mode reminder schedule over 30 human turns of one real session: the first turn gets
 * the full reminder, then one every 5 human turns (6, 11, 16, 21, 26), every 5th of them full
 * and the rest sparse. What the model actually received is read off the requests the real
 * scripted planner was sent (a recording spy), and every later request repeats the earlier
 * turns byte for byte — the stable prefix a provider can cache.
 */

const HUMAN_TURNS = 30;
const EXPECTED: Record<number, "full" | "sparse"> = {
  1: "full",
  6: "sparse",
  11: "sparse",
  16: "sparse",
  21: "sparse",
  26: "full",
};

/** The user messages that carry human text, with the reminders attached to each. */
function humanTurns(messages: readonly ModelMessage[]): { text: string; reminders: string[] }[] {
  return messages.flatMap((m) => {
    if (m.role !== "user") return [];
    const texts = m.content.flatMap((b) => (b.type === "text" ? [b.text] : []));
    const typed = texts.filter((t) => !isReminderText(t));
    return typed.length === 0
      ? []
      : [{ text: typed.join("\n"), reminders: texts.filter(isReminderText) }];
  });
}

describe("the reminder schedule over 30 human turns, in the real session", () => {
  it("attaches full on turns 1 and 26, sparse on 6, 11, 16, 21, nothing else, and never rewrites a turn", async () => {
    const { session, requests } = await startRecorded([
      turn(use("Write", { file_path: "$PLAN_PATH", content: "# Plan\n\nDraft.\n" })),
    ]);
    await settled(session.id);
    for (let n = 2; n <= HUMAN_TURNS; n++) {
      await api.message(ALICE, session.id, { text: `Human turn ${n}: one more thought.` });
      const after = await settled(session.id);
      expect(after.status).toBe("idle");
    }

    const planPath = (await api.plan(ALICE, session.id)).path;
    const facts = { planPath, instructions: null, hasSnapshot: true };
    // The first turn's reminder was decided before the plan file existed; later ones after.
    const expectedText = (n: number) =>
      reminderText(EXPECTED[n]!, { ...facts, planExists: n !== 1 });

    // One model call per human turn, plus the one that followed the plan write on turn 1.
    expect(requests).toHaveLength(HUMAN_TURNS + 1);
    const final = requests.at(-1)!;
    const turns = humanTurns(final.messages);
    expect(turns).toHaveLength(HUMAN_TURNS);
    for (let n = 1; n <= HUMAN_TURNS; n++) {
      const attached = turns[n - 1]!.reminders;
      if (EXPECTED[n] === undefined) expect(attached, `turn ${n}`).toEqual([]);
      else expect(attached, `turn ${n}`).toEqual([expectedText(n)]);
    }
    expect(turns[5]!.reminders[0]).toContain(planPath);
    expect(turns[5]!.reminders[0]).not.toContain("not written yet");

    // Each request saw its newest turn with that turn's reminder, and every earlier request
    // is an exact prefix of the last one.
    const firstRequestOfTurn = new Map<number, ModelRequest>();
    for (const request of requests) {
      const n = humanTurns(request.messages).length;
      if (!firstRequestOfTurn.has(n)) firstRequestOfTurn.set(n, request);
      expect(final.messages.slice(0, request.messages.length)).toEqual(request.messages);
      expect(request.system).toBe(final.system);
      expect(request.tools).toEqual(final.tools);
    }
    for (let n = 1; n <= HUMAN_TURNS; n++) {
      const newest = humanTurns(firstRequestOfTurn.get(n)!.messages).at(-1)!;
      expect(newest.text).toBe(
        n === 1
          ? "Round invoice totals to whole cents and show the currency"
          : `Human turn ${n}: one more thought.`,
      );
      expect(newest.reminders).toEqual(EXPECTED[n] === undefined ? [] : [expectedText(n)]);
    }
  });
});
