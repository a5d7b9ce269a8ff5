import { describe, expect, it } from "vitest";
import {
  deriveTerms,
  MAX_PATH_MENTION_CHARS,
  MAX_PATH_MENTIONS,
  MAX_TOKEN_CHARS,
  pathMentions,
} from "../../src/planner/models/offline/task/terms.ts";
import type { SnapshotReceipt } from "../../src/protocol/index.ts";
import { MAX_STORED_JSON_CHARS } from "../../src/session/schema.ts";
import { tarGz } from "../support/tarballs.ts";
import { ALICE, api } from "../support/worker/sessions.ts";
import { eventsOf, settled } from "./scenario/support.ts";

/**
 * A prompt of one 100,000-character token (issue 10, finding 7) held the offline planner for
 * ~44 s — quadratic regular expressions over the whole prompt — and then ended the session
 * with an event too large to store. The planner reads a bounded part of each input, skips
 * tokens no word is that long, and matches paths run by run.
 */

const TOKEN_SHAPES = {
  lower: "a".repeat(100_000),
  upper: "A".repeat(100_000),
  camel: "aB".repeat(50_000),
  snake: "a_".repeat(50_000),
  dotted: "a.".repeat(50_000),
  path: `${"ab/".repeat(33_333)}x.ts`,
};

describe("the offline planner's reading of huge inputs", () => {
  it.each(Object.entries(TOKEN_SHAPES))(
    "derives no term longer than a word from a 100,000-character %s token",
    (_shape, token) => {
      for (const term of deriveTerms(token))
        expect(term.text.length).toBeLessThanOrEqual(MAX_TOKEN_CHARS);
      const mentions = pathMentions(token);
      expect(mentions.length).toBeLessThanOrEqual(MAX_PATH_MENTIONS);
      for (const m of mentions) expect(m.length).toBeLessThanOrEqual(MAX_PATH_MENTION_CHARS);
    },
  );

  it("still finds the words and paths of an ordinary task inside a long one", () => {
    const task = `Fix the rounding in src/billing/invoice.ts and createInvoice. ${"x".repeat(200_000)}`;
    expect(deriveTerms(task).map((t) => t.text)).toEqual(
      expect.arrayContaining(["round", "createinvoice", "invoice"]),
    );
    expect(pathMentions(task)).toEqual(["src/billing/invoice.ts"]);
  });
});

describe("a 100,000-character single-token prompt in a real session", () => {
  it("reaches plan_ready, every event within the storage limit", async () => {
    const body = await tarGz([
      { name: "README.md", body: "# Tool\n\nRun `npm test`.\n" },
      { name: "package.json", body: '{ "name": "tool", "scripts": { "test": "vitest run" } }\n' },
      { name: "src/index.ts", body: "export function main() {\n  return 1;\n}\n" },
      { name: "src/app.ts", body: "export const app = { name: 'tool' };\n" },
    ]);
    const upload = await api.uploadSnapshot(ALICE, body);
    const snapshot = ((await upload.json()) as SnapshotReceipt).id;
    const session = await api.createSession(ALICE, {
      prompt: "a".repeat(100_000),
      planner: "offline",
      snapshot_id: snapshot,
    });
    const after = await settled(session.id);
    expect(after).toMatchObject({ status: "requires_action", phase: "plan_ready" });
    const events = await eventsOf(after);
    for (const e of events) expect(JSON.stringify(e).length).toBeLessThan(MAX_STORED_JSON_CHARS);
    expect(events.some((e) => e.type === "result" && e.subtype !== "success")).toBe(false);
    const plan = await api.plan(ALICE, session.id);
    expect(plan.content).toContain("offline planner");
    expect(plan.content.length).toBeLessThan(20_000);
  }, 60_000);
});
