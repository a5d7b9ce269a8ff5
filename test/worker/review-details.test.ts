import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  ALICE,
  api,
  createDrivenSession,
  openPlan,
  sessionObject,
} from "../support/worker/sessions.ts";
import { textOf } from "./review-inspect.ts";
import { reviewKeyOf, settled, startScripted, turn, use } from "./scenario/support.ts";

/**
 * The review page's extra data on the real session Durable Object: `reviewDetails` (every plan
 * revision without its text, the asked-for texts, the deadlines) behind the same access check
 * as the review itself, and the page at `?diff=1..2` rendered from it through the worker.
 */

describe("SessionObject.reviewDetails", () => {
  it("lists every revision, reads only the wanted ones (at most two), and refuses a wrong key", async () => {
    const session = await createDrivenSession(ALICE.token);
    await openPlan(session.id, "# Plan\n1. Edit src/a.ts\n");
    await api.decide(ALICE, session.id, {
      tool_use_id: "toolu_plan_1",
      decision: "reject",
      feedback: "Use src/b.ts instead",
    });
    await openPlan(session.id, "# Plan\n1. Edit src/b.ts\n", "toolu_plan_2");
    const key = reviewKeyOf(session);
    const stub = sessionObject(session.id);
    const details = await stub.reviewDetails({ kind: "review", key }, [2, 1, 1, 9]);
    expect(details.ok).toBe(true);
    if (!details.ok) return;
    expect(details.value.revisions.map((r) => [r.revision, r.chars, r.edited_by_user])).toEqual([
      [1, 24, false],
      [2, 24, false],
    ]);
    expect(details.value.contents.map((c) => c.revision).sort()).toEqual([1, 2]);
    expect(details.value).toMatchObject({
      ask_timeout_s: null,
      afk_due_at: null,
      purge_due_at: null,
    });
    const wrong = await stub.reviewDetails({ kind: "review", key: `${key.slice(0, -1)}x` }, [1]);
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.error.status).toBe(404);
  });

  it("gives the ask timeout's deadline while a question is open", async () => {
    const { session } = await startScripted(
      [
        turn(
          use("AskUserQuestion", {
            questions: [
              {
                question: "Which provider?",
                header: "Provider",
                options: [{ label: "GitHub" }, { label: "GitLab" }],
              },
            ],
          }),
        ),
      ],
      { ask_timeout_s: 600 },
    );
    const parked = await settled(session.id);
    expect(parked.pending?.kind).toBe("question");
    const details = await sessionObject(session.id).reviewDetails(
      { kind: "review", key: reviewKeyOf(session) },
      [],
    );
    expect(details.ok).toBe(true);
    if (!details.ok) return;
    expect(details.value.ask_timeout_s).toBe(600);
    const opened = Date.parse(parked.pending!.opened_at);
    expect(details.value.afk_due_at).toBe(new Date(opened + 600_000).toISOString());
  });
});

describe("GET /review/:id with revisions, through the worker", () => {
  it("?diff=1..2 shows the comparison and the feedback that led to revision 2", async () => {
    const session = await createDrivenSession(ALICE.token);
    await openPlan(session.id, "# Plan\n1. Edit src/a.ts\n");
    await api.decide(ALICE, session.id, {
      tool_use_id: "toolu_plan_1",
      decision: "reject",
      feedback: "Use src/b.ts instead",
    });
    await openPlan(session.id, "# Plan\n1. Edit src/b.ts\n", "toolu_plan_2");
    const res = await exports.default.fetch(new Request(`${session.review_url}&diff=1..2`));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(await textOf(html, ".revision-diff-column h3")).toBe(
      "Changes from revision 1 to revision 2",
    );
    expect(await textOf(html, ".revision-asked .asked-feedback")).toBe("Use src/b.ts instead");
    expect(await textOf(html, ".rev-added ins")).toBe("b");
  });
});
