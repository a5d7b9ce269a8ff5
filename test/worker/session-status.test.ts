import { describe, expect, it } from "vitest";
import type { Outcome, PlannerName } from "../../src/protocol/index.ts";
import { nextAlarmAt } from "../../src/session/alarm.ts";
import {
  eventId,
  eventSeq,
  newReviewKey,
  newSessionId,
  sameSecret,
} from "../../src/session/ids.ts";
import { canExecuteRemotely, resolvePlanner } from "../../src/session/planners.ts";
import { planPathFor } from "../../src/session/slug.ts";
import { deriveStatus, type StatusFacts } from "../../src/session/status.ts";

const BASE: StatusFacts = {
  archived: false,
  endedWith: null,
  waiting: null,
  loopActive: false,
  outcome: null,
  executed: false,
};
const APPROVED: Outcome = { kind: "approved", execution_target: "remote" };

describe("status and phase (DESIGN.md table)", () => {
  const table: [string, Partial<StatusFacts>, string, string][] = [
    ["archived", { archived: true, waiting: "plan", loopActive: true }, "archived", "done"],
    ["ended with an error", { endedWith: "error_max_turns", loopActive: true }, "idle", "done"],
    [
      "open AskUserQuestion",
      { waiting: "question", loopActive: true },
      "requires_action",
      "needs_input",
    ],
    ["open ExitPlanMode", { waiting: "plan" }, "requires_action", "plan_ready"],
    ["loop running in plan mode", { loopActive: true }, "running", "running"],
    ["loop running after approve", { loopActive: true, outcome: APPROVED }, "running", "executing"],
    ["turn ended, no wait", {}, "idle", "needs_input"],
    ["turn ended after remote execution", { outcome: APPROVED, executed: true }, "idle", "done"],
  ];
  for (const [situation, facts, status, phase] of table) {
    it(`${situation} → ${status} / ${phase}`, () => {
      expect(deriveStatus({ ...BASE, ...facts })).toEqual({ status, phase });
    });
  }
});

describe("identifiers", () => {
  it("session ids have the documented form and sort by creation time", () => {
    const t = Date.UTC(2026, 0, 1);
    const ids = [
      newSessionId(t),
      newSessionId(t),
      newSessionId(t + 1),
      newSessionId(t + 86_400_000),
    ];
    for (const id of ids) expect(id).toMatch(/^ses_[0-9a-z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("event ids round-trip and refuse anything else", () => {
    expect(eventId(1)).toBe("evt_0000000000000001");
    expect(eventSeq(eventId(123_456))).toBe(123_456);
    for (const bad of [
      "",
      "evt_1",
      "evt_000000000000000a",
      " evt_0000000000000001",
      "evt_99999999999999999",
    ]) {
      expect(eventSeq(bad)).toBeNull();
    }
  });

  it("review keys carry 256 bits in base64url and compare in constant time", () => {
    const a = newReviewKey();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newReviewKey()).not.toBe(a);
    expect(sameSecret(a, a)).toBe(true);
    expect(sameSecret(a, `${a.slice(0, -1)}${a.endsWith("A") ? "B" : "A"}`)).toBe(false);
    expect(sameSecret(a, a.slice(1))).toBe(false);
  });

  it("the plan file path is two words from the session id, stable", () => {
    const id = newSessionId(Date.now());
    expect(planPathFor(id)).toMatch(/^\/plans\/[a-z]+-[a-z]+\.md$/);
    expect(planPathFor(id)).toBe(planPathFor(id));
  });
});

describe("planner choice", () => {
  const auto = { configured: "auto", allowScripted: false } as const;

  it("auto picks anthropic, then openai, then workers-ai, then offline", () => {
    expect(
      resolvePlanner(undefined, { ...auto, ANTHROPIC_API_KEY: "k", OPENAI_BASE_URL: "u", AI: {} }),
    ).toEqual({ ok: true, value: "anthropic" });
    expect(resolvePlanner("auto", { ...auto, OPENAI_BASE_URL: "u", AI: {} })).toEqual({
      ok: true,
      value: "openai",
    });
    expect(resolvePlanner(undefined, { ...auto, AI: {} })).toEqual({
      ok: true,
      value: "workers-ai",
    });
    expect(resolvePlanner(undefined, auto)).toEqual({ ok: true, value: "offline" });
  });

  it("a server default names the planner when the request does not", () => {
    const offline = {
      configured: "offline",
      allowScripted: false,
      ANTHROPIC_API_KEY: "k",
    } as const;
    expect(resolvePlanner(undefined, offline)).toEqual({ ok: true, value: "offline" });
    expect(resolvePlanner("anthropic", offline)).toEqual({ ok: true, value: "anthropic" });
  });

  it("an unavailable planner is planner_unavailable with a way out", () => {
    const cases: [PlannerName, Record<string, string>][] = [
      ["anthropic", {}],
      ["openai", { OPENAI_API_KEY: "a key but no base URL" }],
      ["workers-ai", {}],
      ["scripted", {}],
    ];
    for (const [name, vars] of cases) {
      const result = resolvePlanner(name, { ...auto, ...vars });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.code).toBe("planner_unavailable");
        expect(result.error.message).toContain(name);
      }
    }
    expect(resolvePlanner("scripted", { ...auto, allowScripted: true })).toEqual({
      ok: true,
      value: "scripted",
    });
  });

  it("only the offline planner cannot execute remotely", () => {
    expect(canExecuteRemotely("offline")).toBe(false);
    for (const p of ["anthropic", "openai", "workers-ai", "scripted"] as const)
      expect(canExecuteRemotely(p)).toBe(true);
  });
});

describe("the single alarm", () => {
  it("fires at the earliest of step, AFK and purge, or never", () => {
    expect(nextAlarmAt({ step_due_at: null, afk_due_at: null, purge_due_at: null })).toBeNull();
    expect(nextAlarmAt({ step_due_at: 30, afk_due_at: 20, purge_due_at: 10 })).toBe(10);
    expect(nextAlarmAt({ step_due_at: 5, afk_due_at: 20, purge_due_at: null })).toBe(5);
  });
});
