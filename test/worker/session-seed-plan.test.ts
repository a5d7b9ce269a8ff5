import { describe, expect, it } from "vitest";
import type { ModelMessage } from "../../src/planner/models/types.ts";
import {
  isReminderText,
  reminderText,
  seedPlanState,
} from "../../src/planner/plan-mode/prompts.ts";
import { MAX_APPROVABLE_PLAN_CHARS } from "../../src/protocol/index.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  errorCode,
  withPort,
} from "../support/worker/sessions.ts";
import { settled, startRecorded, turn, use } from "./scenario/support.ts";

/**
 * A session started from a draft written elsewhere (`seed_plan`, docs/PROTOCOL.md "Drafts
 * written elsewhere"), on the real session Durable Object with the real engine and the real
 * scripted planner (a recording spy shows what the model was sent).
 */

const DRAFT = [
  "# Round invoice totals",
  "",
  "1. Round each line total to whole cents in the invoice module.",
  "2. Show the currency next to the total.",
  "",
].join("\n");

/** The reminders attached to the first user message of a request. */
function firstReminders(messages: readonly ModelMessage[]): string[] {
  const first = messages.find((m) => m.role === "user");
  if (first === undefined) return [];
  return first.content.flatMap((b) =>
    b.type === "text" && isReminderText(b.text) ? [b.text] : [],
  );
}

describe("a session created with seed_plan", () => {
  it("holds the draft as plan revision 1 before the first model call, and the model's first read sees it", async () => {
    const { session, requests } = await startRecorded(
      [
        turn(use("Read", { file_path: "$PLAN_PATH" })),
        turn(
          use("Edit", {
            file_path: "$PLAN_PATH",
            old_string: "2. Show the currency",
            new_string: "2. Show the ISO currency code",
          }),
        ),
      ],
      { seed_plan: DRAFT },
    );
    // Before the loop has run at all: the session was created with the draft in place.
    const before = await api.plan(ALICE, session.id);
    expect(before).toMatchObject({ revision: 1, content: DRAFT, edited_by_user: false });

    await settled(session.id);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    // The first model request already says the plan file exists and holds a draft to refine.
    const planPath = before.path;
    const [reminder] = firstReminders(requests[0]!.messages);
    expect(reminder).toBeDefined();
    expect(reminder).toContain(seedPlanState(planPath));
    expect(reminder).not.toContain("No plan file exists yet");
    expect(requests[0]!.context.seedPlan).toBe(DRAFT);

    // The model's Read returned the draft, and its Edit made revision 2 from it.
    const events = await api.allEvents(ALICE, session.id);
    const readResult = events.find(
      (e) =>
        e.type === "user" &&
        Array.isArray(e.message.content) &&
        e.message.content.some((b) => b.type === "tool_result"),
    );
    expect(JSON.stringify(readResult)).toContain("Round each line total to whole cents");
    const after = await api.plan(ALICE, session.id);
    expect(after.revision).toBe(2);
    expect(after.content).toBe(DRAFT.replace("Show the currency", "Show the ISO currency code"));
    // Each stored revision stays readable over the API (`planport show --revision N`).
    expect(
      await (await api.call("GET", `/v1/sessions/${session.id}/plan?revision=1`, ALICE)).json(),
    ).toMatchObject({ revision: 1, content: DRAFT });
    const missing = await api.call("GET", `/v1/sessions/${session.id}/plan?revision=3`, ALICE);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: {
        code: "revision_not_found",
        message: "The plan has no revision 3: its revisions are 1 to 2.",
      },
    });
    for (const bad of ["0", "-1", "two", "1.5"]) {
      const refused = await api.call(
        "GET",
        `/v1/sessions/${session.id}/plan?revision=${bad}`,
        ALICE,
      );
      expect(refused.status, bad).toBe(400);
    }
    await withPort(session.id, (port) => {
      expect(port.readPlanRevision(1)?.content).toBe(DRAFT);
      expect(port.facts.seeded).toBe(true);
    });
  });

  it("says seed_plan: true in system/init, and leaves the field out without a draft", async () => {
    const hostile = `${DRAFT}\n<script>alert(1)</script>\n`;
    const seeded = await createDrivenSession(ALICE.token, { seed_plan: hostile });
    const plain = await createDrivenSession(ALICE.token);
    const [seededInit] = await api.allEvents(ALICE, seeded.id);
    const [plainInit] = await api.allEvents(ALICE, plain.id);
    expect(seededInit).toMatchObject({ type: "system", subtype: "init", seed_plan: true });
    expect(plainInit).toMatchObject({ type: "system", subtype: "init" });
    expect(plainInit).not.toHaveProperty("seed_plan");
    expect(await api.plan(ALICE, seeded.id)).toMatchObject({ revision: 1, content: hostile });
    expect(await api.plan(ALICE, plain.id)).toMatchObject({ revision: 0, content: "" });
    await withPort(plain.id, (port) => expect(port.facts.seeded).toBe(false));
    // The review page shows the draft as revision 1 from the start, escaped like any plan.
    const page = await api.call(
      "GET",
      new URL(seeded.review_url).pathname + new URL(seeded.review_url).search,
    );
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("revision 1");
    expect(html).toContain("Round each line total to whole cents in the invoice module.");
    expect(html).not.toContain("<script>alert(1)</script>");
  });

  it("tells the planner to refine the draft in the full reminder and in the sparse one", () => {
    const facts = {
      planPath: "/plans/bold-eagle.md",
      planExists: true,
      instructions: null,
      hasSnapshot: true,
      seeded: true,
    };
    const full = reminderText("full", facts);
    expect(full).toContain("already holds a draft written elsewhere");
    expect(full).toMatch(/keep what is right, fix what the repository contradicts/);
    expect(full).toContain("do not start over");
    // Custom instructions replace the workflow, not what the plan file holds.
    expect(reminderText("full", { ...facts, instructions: "Only list files." })).toContain(
      "already holds a draft written elsewhere",
    );
    expect(reminderText("sparse", facts)).toContain("started from the user's draft");
    // Without a draft, the reminders are exactly what they were.
    const plain = { ...facts, seeded: false };
    expect(reminderText("full", plain)).not.toContain("draft written elsewhere");
    expect(reminderText("full", plain)).toBe(
      reminderText("full", {
        planPath: facts.planPath,
        planExists: true,
        instructions: null,
        hasSnapshot: true,
      }),
    );
    expect(reminderText("sparse", plain)).not.toContain("draft");
  });

  it("refuses an empty or too long seed_plan with 400 invalid_body naming the field", async () => {
    for (const seed of ["", "x".repeat(MAX_APPROVABLE_PLAN_CHARS + 1), 42]) {
      const res = await api.call("POST", "/v1/sessions", ALICE, {
        json: { prompt: "Add OAuth login", seed_plan: seed },
      });
      expect(res.status).toBe(400);
      expect(await errorCode(res.clone())).toBe("invalid_body");
      const { error } = (await res.json()) as { error: { message: string } };
      expect(error.message).toContain("seed_plan");
    }
    const longest = await api.call("POST", "/v1/sessions", ALICE, {
      json: {
        prompt: "Add OAuth login",
        seed_plan: "y".repeat(MAX_APPROVABLE_PLAN_CHARS),
        planner: "offline",
      },
    });
    expect(longest.status).toBe(201);
  });
});
