import { describe, expect, it } from "vitest";
import type { Event } from "../../src/protocol/index.ts";
import { escapeHtml } from "../../src/review/html.ts";
import { renderReviewPage } from "../../src/review/page.ts";
import { SHORTEN_REQUEST } from "../../src/review/panels.ts";
import {
  fixtureEvent,
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  hostilePlan,
  PLAN_MARKDOWN,
  QUESTION_INPUT,
  XSS_PAYLOADS,
} from "./review-fixtures.ts";
import { expectInert, parseElements, textOf } from "./review-inspect.ts";

const NONCE = "test-nonce-0123456789";
const NOW = Date.parse("2026-05-01T10:02:00.000Z");

/** A transcript where every text the model or the repository controls is hostile. */
function hostileEvents(): Event[] {
  const events: Event[] = [];
  for (const payload of XSS_PAYLOADS) {
    events.push(
      fixtureEvent({
        type: "assistant",
        message: {
          role: "assistant",
          content: [
            { type: "text", text: `Looking at ${payload}` },
            {
              type: "tool_use",
              id: `toolu_${events.length}`,
              name: "Grep",
              input: { pattern: payload, path: payload, glob: payload },
            },
            {
              type: "tool_use",
              id: `toolu_r${events.length}`,
              name: "Read",
              input: { file_path: payload },
            },
            {
              type: "tool_use",
              id: `toolu_x${events.length}`,
              name: payload,
              input: { [payload]: payload },
            },
          ],
        },
      }),
      fixtureEvent({
        type: "user",
        message: {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: `toolu_${events.length}`,
              content: `Found 1 file\n${payload}`,
            },
            {
              type: "tool_result",
              tool_use_id: `toolu_r${events.length}`,
              content: `denied: ${payload}`,
              is_error: true,
            },
            {
              type: "tool_result",
              tool_use_id: "toolu_orphan",
              content: [{ type: "text", text: payload }],
            },
          ],
        },
      }),
      fixtureEvent({ type: "user", message: { role: "user", content: payload } }),
      fixtureEvent({ type: "system", subtype: "notice", message: payload }),
    );
  }
  events.push(
    fixtureEvent({
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      num_turns: 1,
      message: XSS_PAYLOADS.join(" "),
    }),
  );
  return events;
}

function page(
  overrides: Parameters<typeof fixtureSession>[0] = {},
  plan = fixturePlan(),
  events = fixtureEvents(),
): string {
  return renderReviewPage({
    session: fixtureSession(overrides),
    plan,
    events,
    nonce: NONCE,
    now: NOW,
  });
}

describe("review page: untrusted content is inert", () => {
  it("a hostile plan, transcript, title and question render as text only", async () => {
    const hostileTitle = XSS_PAYLOADS.join("");
    const html = renderReviewPage({
      session: fixtureSession({ title: hostileTitle }),
      plan: fixturePlan(hostilePlan(), { path: "/plans/<img src=x onerror=alert(1)>.md" }),
      events: hostileEvents(),
      nonce: NONCE,
      now: NOW,
    });
    await expectInert(html, NONCE);
    expect(html).toContain("&lt;script&gt;alert(&#39;script&#39;)&lt;/script&gt;");
  });

  it("the plan editor holds the hostile plan as text: </textarea> cannot close it", async () => {
    const plan = fixturePlan(hostilePlan());
    const html = page({}, plan);
    const elements = await expectInert(html, NONCE);
    // Exactly the page's own text areas: editor, feedback, comment quote and note.
    expect(elements.filter((e) => e.tag === "textarea").map((e) => e.attrs.get("id"))).toEqual([
      "plan-editor",
      "feedback",
      "comment-quote",
      "comment-text",
    ]);
    const editorText = await textOf(html, "textarea#plan-editor");
    expect(editorText).toContain("&lt;/textarea&gt;&lt;script&gt;");
  });

  it("hostile question texts, headers and options stay in text and quoted attributes", async () => {
    const payload = "\"'><img src=x onerror=alert(1)></textarea></script>";
    const html = page({
      status: "requires_action",
      phase: "needs_input",
      pending: {
        kind: "question",
        tool_use_id: payload,
        opened_at: "2026-05-01T10:01:00.000Z",
        input: {
          questions: [
            {
              question: payload,
              header: payload,
              multiSelect: false,
              options: [
                { label: payload, description: payload },
                { label: "B", description: payload },
              ],
            },
          ],
        },
      },
    });
    const elements = await expectInert(html, NONCE);
    // HTMLRewriter reports attribute values as written; a browser decodes them back to the
    // payload. The question and option texts the script sends back are JSON.
    const fieldset = elements.find((e) => e.tag === "fieldset" && e.attrs.has("data-question"));
    expect(fieldset?.attrs.get("data-question")).toBe(escapeHtml(JSON.stringify(payload)));
    const form = elements.find((e) => e.attrs.get("id") === "question-form");
    expect(form?.attrs.get("data-tool-use-id")).toBe(escapeHtml(payload));
    const firstOption = elements.find((e) => e.attrs.get("id") === "q0-o0");
    expect(firstOption?.attrs.get("value")).toBe(escapeHtml(JSON.stringify(payload)));
  });

  it("the outcome panel of an ended session shows its hostile message as text", async () => {
    const html = page(
      {
        status: "idle",
        phase: "done",
        pending: null,
        outcome: { kind: "terminated", subtype: "error_during_execution" },
      },
      fixturePlan(),
      hostileEvents(),
    );
    await expectInert(html, NONCE);
    expect(await textOf(html, "section[data-region=outcome] .detail")).toContain("&lt;svg onload");
  });
});

describe("review page: readable without JavaScript", () => {
  it("server-renders the plan, its outline, revision and the status", async () => {
    const html = page({}, fixturePlan(PLAN_MARKDOWN, { revision: 3, edited_by_user: true }));
    const elements = await parseElements(html);
    const ids = elements.map((e) => e.attrs.get("id"));
    expect(ids).toEqual(
      expect.arrayContaining([
        "sec-context",
        "sec-files-to-change",
        "sec-steps",
        "sec-verification",
      ]),
    );
    const outlineLinks = elements
      .filter((e) => e.tag === "a" && e.attrs.get("href")?.startsWith("#sec-"))
      .map((e) => e.attrs.get("href"));
    expect(outlineLinks).toEqual([
      "#sec-add-github-oauth-login",
      "#sec-context",
      "#sec-files-to-change",
      "#sec-steps",
      "#sec-verification",
    ]);
    const meta = await textOf(html, ".plan-meta");
    expect(meta).toContain("revision 3");
    expect(meta).toContain("edited by you");
    expect(await textOf(html, "[data-region=status] .phase")).toBe("plan ready");
    expect(await textOf(html, "article#plan-body")).toContain("Write the callback route.");
    expect(html).toContain("<title>Plan ready · Add GitHub OAuth login — planport</title>");
  });

  it("every control that needs the script starts disabled, so nothing half-works without it", async () => {
    const elements = await parseElements(page());
    const fieldsets = elements.filter((e) => e.attrs.has("data-needs-script"));
    expect(fieldsets.length).toBeGreaterThanOrEqual(3);
    for (const f of fieldsets) expect(f.attrs.has("disabled")).toBe(true);
  });

  it("labels every form control", async () => {
    const elements = await parseElements(
      page({
        phase: "needs_input",
        pending: { kind: "question", tool_use_id: "t", input: QUESTION_INPUT, opened_at: "x" },
      }),
    );
    const labelled = new Set(
      elements.filter((e) => e.tag === "label").map((e) => e.attrs.get("for")),
    );
    for (const control of elements.filter((e) => ["input", "textarea", "select"].includes(e.tag))) {
      expect(
        labelled.has(control.attrs.get("id")),
        `control ${control.attrs.get("id")} has a label`,
      ).toBe(true);
    }
  });

  it("shows the transcript with summarised tool calls and visible denials", async () => {
    const text = await textOf(page(), "[data-region=transcript]");
    expect(text).toContain("Grep &#39;session&#39; → 4 files");
    expect(text).toContain("Read src/app.ts (lines 1–80) → 80 lines");
    expect(text).toContain("Write src/app.ts (1 line) → denied");
    expect(text).toContain("Permission denied");
  });

  it("a session without a plan yet says so", async () => {
    const html = page({ status: "running", phase: "running", pending: null }, null as never, []);
    expect(await textOf(html, "article#plan-body")).toContain("No plan yet");
    expect(await textOf(html, "[data-region=status] .phase")).toBe("researching");
  });
});

describe("review page: what is offered", () => {
  it("offers both approvals while a terminal is polling and the planner can execute", async () => {
    const html = page({ terminal_polled_at: new Date(NOW - 5_000).toISOString() });
    const elements = await parseElements(html);
    const byAction = (a: string) => elements.find((e) => e.attrs.get("data-action") === a);
    expect(byAction("approve")).toBeDefined();
    expect(byAction("teleport")?.attrs.has("hidden")).toBe(false);
    expect(byAction("reject")).toBeDefined();
    expect(elements.find((e) => e.attrs.has("data-teleport-reason"))?.attrs.has("hidden")).toBe(
      true,
    );
  });

  it("explains why send-to-terminal is missing when no terminal polled in the last 15 s", async () => {
    const html = page({ terminal_polled_at: new Date(NOW - 16_000).toISOString() });
    const elements = await parseElements(html);
    expect(
      elements.find((e) => e.attrs.get("data-action") === "teleport")?.attrs.has("hidden"),
    ).toBe(true);
    expect(await textOf(html, "[data-teleport-reason]")).toContain("planport attach ses_");
  });

  it("does not offer cloud execution when the planner cannot execute, and says why", async () => {
    const html = page({ planner: "offline", can_execute_remotely: false });
    const elements = await parseElements(html);
    expect(elements.find((e) => e.attrs.get("data-action") === "approve")).toBeUndefined();
    expect(await textOf(html, "#approve-reason")).toContain(
      "offline planner cannot carry out plans in the cloud",
    );
    expect(await textOf(html, "[data-region=status] .planner")).toBe("offline planner (no model)");
  });

  it("withholds approval of a plan over 200,000 characters and pre-fills a request to shorten it", async () => {
    const huge = `# Huge\n\n${"word ".repeat(41_000)}`;
    const html = page({ terminal_polled_at: new Date(NOW).toISOString() }, fixturePlan(huge));
    const elements = await parseElements(html);
    expect(elements.find((e) => e.attrs.get("data-action") === "approve")).toBeUndefined();
    expect(elements.find((e) => e.attrs.get("data-action") === "teleport")).toBeUndefined();
    expect(elements.find((e) => e.attrs.get("id") === "plan-editor")).toBeUndefined();
    expect(elements.find((e) => e.attrs.get("data-action") === "reject")).toBeDefined();
    expect(await textOf(html, "textarea#feedback")).toBe(SHORTEN_REQUEST);
    expect(await textOf(html, ".plan .warning")).toContain("too large to review in full");
  });

  it("renders an open question as radio and checkbox groups with an Other answer each", async () => {
    const html = page({
      status: "requires_action",
      phase: "needs_input",
      pending: { kind: "question", tool_use_id: "toolu_q", input: QUESTION_INPUT, opened_at: "x" },
    });
    const elements = await parseElements(html);
    const inputs = elements.filter((e) => e.tag === "input");
    expect(
      inputs.filter((e) => e.attrs.get("name") === "q0").map((e) => e.attrs.get("type")),
    ).toEqual(["radio", "radio", "radio"]);
    expect(
      inputs.filter((e) => e.attrs.get("name") === "q1").map((e) => e.attrs.get("type")),
    ).toEqual(["checkbox", "checkbox", "checkbox"]);
    expect(inputs.filter((e) => e.attrs.has("data-other"))).toHaveLength(2);
    expect(
      elements.find((e) => e.attrs.get("data-region") === "decision")?.attrs.has("hidden"),
    ).toBe(true);
  });

  it("an unreadable question input is reported, not rendered half", async () => {
    const html = page({
      phase: "needs_input",
      pending: {
        kind: "question",
        tool_use_id: "toolu_q",
        input: { questions: "nope" },
        opened_at: "x",
      },
    });
    expect(await textOf(html, "[data-region=question]")).toContain("could not be displayed");
  });

  it("after remote execution shows the pull command and a place for the diff", async () => {
    const html = page({
      status: "idle",
      phase: "done",
      pending: null,
      permission_mode: "default",
      outcome: { kind: "approved", execution_target: "remote" },
    });
    const elements = await parseElements(html);
    expect(elements.some((e) => e.attrs.has("data-diff-target"))).toBe(true);
    expect(await textOf(html, "[data-region=outcome] .command")).toBe(
      "planport pull ses_01jv7m2k8q0000000000000000 --apply",
    );
    expect(elements.find((e) => e.attrs.get("data-region") === "stop")?.attrs.has("hidden")).toBe(
      true,
    );
  });

  it("a teleported session says where the plan went and offers nothing more", async () => {
    const html = page({
      status: "archived",
      phase: "done",
      pending: null,
      outcome: { kind: "teleport", execution_target: "local" },
    });
    expect(await textOf(html, "#outcome-heading")).toBe("Sent to your terminal");
    const elements = await parseElements(html);
    for (const region of ["question", "decision", "comments", "message", "stop"]) {
      expect(elements.find((e) => e.attrs.get("data-region") === region)?.attrs.has("hidden")).toBe(
        true,
      );
    }
  });
});
