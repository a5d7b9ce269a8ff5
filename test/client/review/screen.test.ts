import { describe, expect, it } from "vitest";
import {
  answerText,
  EDITOR_TEMPLATE,
  editorFeedback,
  OTHER,
  type ReviewState,
  reviewScreen,
  screenKey,
} from "../../../local-client/review/screen.ts";
import type { PlanFile, Session } from "../../../src/protocol/index.ts";

function session(over: Partial<Session> = {}): Session {
  return {
    id: "ses_0123456789abcdefghijklmnop",
    title: "Add OAuth login",
    status: "requires_action",
    phase: "plan_ready",
    permission_mode: "plan",
    planner: "offline",
    can_execute_remotely: false,
    reject_count: 0,
    outcome: null,
    review_url: "http://127.0.0.1:8787/review/ses_0123456789abcdefghijklmnop?key=k",
    usage: { input_tokens: 0, output_tokens: 0 },
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    pending: { kind: "plan", tool_use_id: "toolu_1", input: {}, opened_at: "2026-01-01T00:00:00Z" },
    ...over,
  };
}

const plan: PlanFile = {
  path: "plan.md",
  content: "# Plan\n\n1. Do it\n",
  revision: 1,
  edited_by_user: false,
};
const values = (s: ReviewState) => reviewScreen(s).choices.map((c) => c.value);

describe("reviewScreen: which decisions are offered", () => {
  it("a plan waiting for review from a planner that cannot execute: send to terminal, keep planning (typed or $EDITOR), stop", () => {
    const screen = reviewScreen({ session: session(), plan });
    expect(screen.choices.map((c) => c.value)).toEqual([
      "teleport",
      "feedback",
      "feedback_editor",
      "stop",
    ]);
    expect(screen.decisionToolUseId).toBe("toolu_1");
    expect(screen.withheld.join(" ")).toMatch(
      /offline planner cannot carry out plans in the cloud/,
    );
  });

  it("a planner that can execute also offers approve and run in the cloud, first", () => {
    expect(
      values({ session: session({ can_execute_remotely: true, planner: "anthropic" }), plan }),
    ).toEqual(["approve", "teleport", "feedback", "feedback_editor", "stop"]);
  });

  it("a plan that needs someone else's approval offers its requester only keep planning and stop", () => {
    const needs = session({ can_execute_remotely: true, approvers: ["bob", "carol"] });
    const screen = reviewScreen({ session: { ...needs, your_role: "requester" }, plan });
    expect(screen.choices.map((c) => c.value)).toEqual(["feedback", "feedback_editor", "stop"]);
    expect(screen.withheld[0]).toMatch(/needs the approval of bob or carol/);
    const approver = reviewScreen({ session: { ...needs, your_role: "approver" }, plan });
    expect(approver.choices.map((c) => c.value)).toEqual([
      "approve",
      "teleport",
      "feedback",
      "feedback_editor",
      "stop",
    ]);
    expect(approver.choices[1]?.label).toBe(
      "Approve and send to terminal (to the requester's terminal)",
    );
  });

  it("a plan over the approvable size offers only keep planning and stop, and says why", () => {
    const big = { ...plan, content: "x".repeat(200_001) };
    const screen = reviewScreen({ session: session({ can_execute_remotely: true }), plan: big });
    expect(screen.choices.map((c) => c.value)).toEqual(["feedback", "feedback_editor", "stop"]);
    expect(screen.withheld[0]).toMatch(/too large to approve \(200,001 characters/);
  });

  it("a running session offers a message to the planner and stop", () => {
    const screen = reviewScreen({
      session: session({ status: "running", phase: "running", pending: null }),
      plan: null,
    });
    expect(screen.choices.map((c) => c.value)).toEqual(["message", "stop"]);
    expect(screen.decisionToolUseId).toBeNull();
    expect(screen.header[1]).toContain("no plan yet");
  });

  it("an archived or done session offers nothing", () => {
    for (const over of [
      { status: "archived" as const, phase: "done" as const },
      { status: "idle" as const, phase: "done" as const, outcome: { kind: "teleport" as const } },
    ]) {
      const screen = reviewScreen({ session: session(over), plan });
      expect(screen.choices).toEqual([]);
      expect(screen.over).toBe(true);
      expect(screen.decisionToolUseId).toBeNull();
    }
  });
});

describe("reviewScreen: header and question", () => {
  it("shows title, id, planner, phase, revision and how often it was kept planning", () => {
    const screen = reviewScreen({
      session: session({ reject_count: 2 }),
      plan: { ...plan, revision: 3, edited_by_user: true },
    });
    expect(screen.header).toEqual([
      "planport review · Add OAuth login",
      "ses_0123456789abcdefghijklmnop · offline planner · phase: plan ready · revision 3 (edited) · keep planning ×2",
    ]);
  });

  it("sanitises the title, the question and its options", () => {
    const screen = reviewScreen({
      session: session({
        title: "Add\x1b]0;pwned\x07 OAuth\x1b[2J\u202e",
        status: "requires_action",
        phase: "needs_input",
        pending: {
          kind: "question",
          tool_use_id: "toolu_q",
          opened_at: "2026-01-01T00:00:00Z",
          input: {
            questions: [
              {
                question: "Which\x1b[31m provider?\u2067",
                header: "Auth",
                options: [
                  { label: "Git\x9b2JHub\u202e", description: "the \x1b]8;;http://evil\x07link" },
                ],
              },
            ],
          },
        },
      }),
      plan: null,
    });
    // Hidden text-direction characters are shown as marks; the answer's key and value stay exact.
    expect(screen.header[0]).toBe("planport review · Add OAuth⟨U+202E⟩");
    const q = screen.question?.prompts[0];
    expect(screen.question?.toolUseId).toBe("toolu_q");
    // The key is the question exactly as asked: the answer is filed under it.
    expect(q?.key).toBe("Which\x1b[31m provider?\u2067");
    expect(q?.text).toBe("Auth: Which provider?⟨U+2067⟩");
    expect(q?.options.map((o) => o.label)).toEqual(["GitHub⟨U+202E⟩", "Other"]);
    expect(q?.options[0]?.value).toBe("Git\x9b2JHub\u202e");
    expect(q?.options[0]?.hint).toBe("the link");
    expect(q?.options.at(-1)?.value).toBe(OTHER);
    expect(screen.choices.map((c) => c.value)).toEqual(["stop"]);
  });

  it("a question input it cannot read is not offered as a question", () => {
    const screen = reviewScreen({
      session: session({
        phase: "needs_input",
        pending: {
          kind: "question",
          tool_use_id: "t",
          opened_at: "x",
          input: { questions: "nope" },
        },
      }),
      plan: null,
    });
    expect(screen.question).toBeNull();
  });
});

describe("screenKey", () => {
  it("changes with a new revision, phase, pending call or rejection, not otherwise", () => {
    const base = screenKey({ session: session(), plan });
    expect(screenKey({ session: session({ updated_at: "later" }), plan })).toBe(base);
    expect(screenKey({ session: session(), plan: { ...plan, revision: 2 } })).not.toBe(base);
    expect(screenKey({ session: session({ phase: "running" }), plan })).not.toBe(base);
    expect(screenKey({ session: session({ reject_count: 1 }), plan })).not.toBe(base);
    expect(screenKey({ session: session({ pending: null }), plan })).not.toBe(base);
  });
});

describe("answerText and editorFeedback", () => {
  it("joins picked labels with the typed Other answer, as the review page does", () => {
    expect(answerText(["GitHub"])).toBe("GitHub");
    expect(answerText(["GitHub", OTHER], "  GitLab ")).toBe("GitHub, GitLab");
    expect(answerText([OTHER], "")).toBeNull();
    expect(answerText([])).toBeNull();
  });

  it("drops # lines from editor feedback and trims it", () => {
    expect(editorFeedback(`${EDITOR_TEMPLATE}Cover the migration.\n\nAnd the rollback.\n`)).toBe(
      "Cover the migration.\n\nAnd the rollback.",
    );
    expect(editorFeedback(EDITOR_TEMPLATE)).toBe("");
  });
});
