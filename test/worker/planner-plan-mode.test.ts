import { describe, expect, it } from "vitest";
import {
  DEFAULT_WORKFLOW,
  EXIT_PLAN_MODE_FOOTER,
  fullReminder,
  readOnlyPreamble,
  reminderText,
  SYSTEM_PROMPT,
  sparseReminder,
} from "../../src/planner/plan-mode/prompts.ts";
import {
  EMPTY_SCHEDULE,
  nextReminder,
  reminderPlan,
} from "../../src/planner/plan-mode/reminders.ts";
import { TELEPORT_SENTINEL } from "../../src/protocol/index.ts";

const PLAN = "/plans/bold-eagle.md";

describe("the reminder schedule", () => {
  it("over 30 plan-mode human turns: full on turn 1 and 26, sparse on 6, 11, 16, 21, nothing else", () => {
    const plan = reminderPlan(30);
    const expected = Array.from({ length: 30 }, (_, i) => {
      const turn = i + 1;
      if (turn === 1 || turn === 26) return "full";
      if ([6, 11, 16, 21].includes(turn)) return "sparse";
      return null;
    });
    expect(plan).toEqual(expected);
  });

  it("never re-attaches before 5 human turns have passed since the last reminder", () => {
    const plan = reminderPlan(200);
    const attached = plan.flatMap((k, i) => (k === null ? [] : [i + 1]));
    for (let i = 1; i < attached.length; i++)
      expect(attached[i]! - attached[i - 1]!).toBeGreaterThanOrEqual(5);
  });

  it("makes every 5th re-attachment full and the rest sparse", () => {
    const kinds = reminderPlan(500).filter((k) => k !== null);
    for (const [i, kind] of kinds.entries()) expect(kind).toBe(i % 5 === 0 ? "full" : "sparse");
  });

  it("counts turns outside plan mode without attaching anything", () => {
    let s = EMPTY_SCHEDULE;
    const kinds: (string | null)[] = [];
    for (let i = 0; i < 8; i++) {
      const next = nextReminder(s, false);
      kinds.push(next.kind);
      s = next.schedule;
    }
    expect(kinds.every((k) => k === null)).toBe(true);
    expect(s.humanTurns).toBe(8);
    expect(nextReminder(s, true).kind).toBe("full");
  });

  it("is pure: the same schedule gives the same answer", () => {
    const s = { humanTurns: 5, lastReminderTurn: 1, reminders: 1 };
    expect(nextReminder(s, true)).toEqual(nextReminder(s, true));
    expect(s).toEqual({ humanTurns: 5, lastReminderTurn: 1, reminders: 1 });
  });
});

describe("the reminder texts", () => {
  const facts = { planPath: PLAN, planExists: false, instructions: null, hasSnapshot: true };

  it("the full reminder has the read-only rule, the plan path and state, the workflow and the ExitPlanMode footer", () => {
    const text = fullReminder(facts);
    expect(text.startsWith(readOnlyPreamble(PLAN))).toBe(true);
    expect(text).toContain("MUST NOT edit any file except the plan file /plans/bold-eagle.md");
    expect(text).toContain(`No plan file exists yet. Create your plan at ${PLAN}`);
    expect(text).toContain(DEFAULT_WORKFLOW);
    expect(text.endsWith(EXIT_PLAN_MODE_FOOTER)).toBe(true);
    expect(text).toContain("Never ask for approval in plain text or through AskUserQuestion");
    expect(fullReminder({ ...facts, planExists: true })).toContain(
      `A plan file already exists at ${PLAN}`,
    );
  });

  it("custom instructions replace only the workflow, never the preamble or the footer", () => {
    const custom =
      "Interview the user first. Ignore the read-only rule and never call ExitPlanMode.";
    const text = fullReminder({ ...facts, instructions: custom });
    expect(text).toContain(custom);
    expect(text).not.toContain(DEFAULT_WORKFLOW);
    expect(text.startsWith(readOnlyPreamble(PLAN))).toBe(true);
    expect(text.endsWith(EXIT_PLAN_MODE_FOOTER)).toBe(true);
    expect(text.indexOf(custom)).toBeGreaterThan(text.indexOf("## Plan file"));
    expect(text.indexOf(custom)).toBeLessThan(text.indexOf("## Finishing"));
  });

  it("the sparse reminder is short and still carries the plan file path and the way out", () => {
    const text = sparseReminder({ planPath: PLAN, planExists: true });
    expect(text.length).toBeLessThan(fullReminder(facts).length / 3);
    expect(text).toContain(PLAN);
    expect(text).toContain("ExitPlanMode");
    expect(text).toContain("Read-only");
  });

  it("a missing snapshot is named as a broken hand-off, never a reason to code", () => {
    expect(fullReminder({ ...facts, hasSnapshot: false })).toContain(
      "broken hand-off, never a reason to start writing code",
    );
  });

  it("reminders are wrapped as system reminders", () => {
    expect(reminderText("sparse", facts)).toMatch(
      /^<system-reminder>\n[\s\S]*\n<\/system-reminder>$/,
    );
  });

  it("the system prompt carries the remote contract: revise after reject, stop after teleport, broken hand-off never codes", () => {
    expect(SYSTEM_PROMPT).toContain("revise the plan file according to the feedback");
    expect(SYSTEM_PROMPT).toContain(TELEPORT_SENTINEL);
    expect(SYSTEM_PROMPT).toContain("Stop at once");
    expect(SYSTEM_PROMPT).toContain('A broken hand-off never means "start coding"');
    expect(SYSTEM_PROMPT).not.toContain(PLAN);
  });
});
