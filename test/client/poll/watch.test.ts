import { describe, expect, it } from "vitest";
import {
  afterFailure,
  changeLine,
  eraseLines,
  fitToScreen,
  phaseChanges,
  WATCH_HEADER,
  watchRows,
} from "../../../local-client/poll/watch.ts";
import type { Session, SessionPhase } from "../../../src/protocol/index.ts";

/** The pure core of `planport watch`: phase changes between ticks, rows, screen fitting. */

const CREATED = "2026-01-01T10:00:00.000Z";

function session(id: string, phase: SessionPhase, extra: Partial<Session> = {}): Session {
  return {
    id,
    title: `task ${id}`,
    status: phase === "done" ? "archived" : "running",
    phase,
    permission_mode: "plan",
    planner: "offline",
    can_execute_remotely: false,
    reject_count: 0,
    outcome: null,
    review_url: `http://h/review/${id}?key=k`,
    usage: { input_tokens: 0, output_tokens: 0, cost_usd: 0 },
    created_at: CREATED,
    updated_at: CREATED,
    ...extra,
  } as Session;
}

describe("phaseChanges", () => {
  it("the first tick reports every listed session's phase, oldest first", () => {
    const { changes, seen } = phaseChanges(new Map(), [
      session("ses_new", "running"),
      session("ses_old", "plan_ready"),
    ]);
    expect(changes).toEqual([
      { event: "phase", id: "ses_old", phase: "plan_ready" },
      { event: "phase", id: "ses_new", phase: "running" },
    ]);
    expect([...seen]).toEqual([
      ["ses_new", "running"],
      ["ses_old", "plan_ready"],
    ]);
  });

  it("an unchanged tick reports nothing", () => {
    const list = [session("ses_a", "running"), session("ses_b", "needs_input")];
    const first = phaseChanges(new Map(), list);
    expect(phaseChanges(first.seen, list).changes).toEqual([]);
  });

  it("reports only the sessions whose phase changed, and a new session", () => {
    const first = phaseChanges(new Map(), [
      session("ses_a", "running"),
      session("ses_b", "running"),
    ]);
    const second = phaseChanges(first.seen, [
      session("ses_c", "running"),
      session("ses_a", "plan_ready"),
      session("ses_b", "running"),
    ]);
    expect(second.changes).toEqual([
      { event: "phase", id: "ses_a", phase: "plan_ready" },
      { event: "phase", id: "ses_c", phase: "running" },
    ]);
  });

  it("a session that drops off the list is not reported again when it comes back unchanged", () => {
    const first = phaseChanges(new Map(), [session("ses_a", "running")]);
    const gone = phaseChanges(first.seen, []);
    expect(gone.changes).toEqual([]);
    expect(phaseChanges(gone.seen, [session("ses_a", "running")]).changes).toEqual([]);
    expect(phaseChanges(gone.seen, [session("ses_a", "done")]).changes).toEqual([
      { event: "phase", id: "ses_a", phase: "done" },
    ]);
  });

  it("an id listed twice is read by its first entry, once", () => {
    const { changes, seen } = phaseChanges(new Map(), [
      session("ses_a", "plan_ready"),
      session("ses_a", "running"),
    ]);
    expect(changes).toEqual([{ event: "phase", id: "ses_a", phase: "plan_ready" }]);
    expect(seen.get("ses_a")).toBe("plan_ready");
  });

  it("does not change the map it was given", () => {
    const seen = new Map<string, SessionPhase>([["ses_a", "running"]]);
    phaseChanges(seen, [session("ses_a", "done")]);
    expect(seen.get("ses_a")).toBe("running");
  });

  it("a phase going back (a rejection: plan ready → running) is a change", () => {
    const first = phaseChanges(new Map(), [session("ses_a", "plan_ready")]);
    expect(phaseChanges(first.seen, [session("ses_a", "running")]).changes).toEqual([
      { event: "phase", id: "ses_a", phase: "running" },
    ]);
  });
});

describe("watchRows", () => {
  it("has id, title, phase, outcome, keep planning, age, planner and cost, in the header's order", () => {
    expect(WATCH_HEADER).toEqual([
      "ID",
      "TITLE",
      "PHASE",
      "OUTCOME",
      "KEEP PLANNING",
      "AGE",
      "PLANNER",
      "COST",
    ]);
    const rows = watchRows(
      [
        session("ses_a", "plan_ready", {
          reject_count: 2,
          planner: "anthropic",
          usage: { input_tokens: 1, output_tokens: 1, cost_usd: 0.1234 },
        }),
      ],
      Date.parse(CREATED) + 5 * 60_000,
    );
    expect(rows).toEqual([
      ["ses_a", "task ses_a", "plan ready", "—", "2", "5m", "anthropic", "$0.12"],
    ]);
  });

  it("shows an unknown cost as a dash (null, or a server that does not send it)", () => {
    const now = Date.parse(CREATED);
    const unknown = session("ses_a", "running", {
      usage: { input_tokens: 0, output_tokens: 0, cost_usd: null },
    });
    const absent = session("ses_b", "running", { usage: { input_tokens: 0, output_tokens: 0 } });
    expect(watchRows([unknown, absent], now).map((r) => r[7])).toEqual(["—", "—"]);
  });

  it("strips escape sequences and line breaks from every field the server sent", () => {
    const rows = watchRows(
      [
        session("ses_\x1b[2Ja", "running", {
          title: "fix \x1b]0;pwned\x07login\nnow\u202e",
          planner: "off\x1b[31mline",
        }),
      ],
      Date.parse(CREATED),
    );
    const joined = rows.flat().join(" ");
    expect(joined).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    expect(rows[0]?.[1]).toBe("fix login now⟨U+202E⟩");
    expect(rows[0]?.[6]).toBe("offline");
  });

  it("cuts a long title to 40 characters after sanitising it", () => {
    const rows = watchRows([session("ses_a", "running", { title: "x".repeat(100) })], 0);
    expect(Array.from(rows[0]?.[1] ?? "")).toHaveLength(40);
    expect(rows[0]?.[1]?.endsWith("…")).toBe(true);
  });
});

describe("changeLine", () => {
  it("says id, phase in the CLI's words, and title", () => {
    expect(
      changeLine({ event: "phase", id: "ses_a", phase: "needs_input" }, { title: "Add OAuth" }),
    ).toBe("ses_a  needs input  Add OAuth");
  });

  it("without the session it says id and phase", () => {
    expect(changeLine({ event: "phase", id: "ses_a", phase: "done" })).toBe("ses_a  done");
  });

  it("a hostile title cannot add a line or an escape", () => {
    const line = changeLine(
      { event: "phase", id: "ses_a", phase: "running" },
      { title: "a\nses_b  plan ready\x1b[1A" },
    );
    expect(line).toBe("ses_a  researching  a ses_b plan ready");
  });
});

describe("fitToScreen", () => {
  it("keeps a table that fits, each line cut to the width", () => {
    expect(fitToScreen(["abcdef", "xy"], { columns: 4, rows: 10 })).toEqual(["abc…", "xy"]);
  });

  it("keeps rows - 1 lines at most, the last one saying how many are hidden", () => {
    const lines = ["H", "1", "2", "3", "4", "5"];
    expect(fitToScreen(lines, { columns: 80, rows: 4 })).toEqual(["H", "1", "… 4 more"]);
  });

  it("a table of exactly rows - 1 lines is kept whole", () => {
    expect(fitToScreen(["H", "1", "2"], { columns: 80, rows: 4 })).toEqual(["H", "1", "2"]);
  });

  it("a tiny terminal still gets one line", () => {
    expect(fitToScreen(["H", "1"], { columns: 0, rows: 0 })).toHaveLength(1);
  });
});

describe("eraseLines", () => {
  it("moves up over the last table and clears below", () => {
    expect(eraseLines(3)).toBe("\x1b[3F\x1b[J");
  });
  it("is nothing before the first table", () => {
    expect(eraseLines(0)).toBe("");
  });
});

describe("afterFailure", () => {
  it("a transient failure waits the interval", () => {
    expect(afterFailure(0, { transient: true }, 3_000, 5)).toEqual({
      kind: "retry",
      failures: 1,
      waitMs: 3_000,
    });
  });

  it("honours a longer Retry-After, capped at 60 s, never shorter than the interval", () => {
    expect(afterFailure(1, { transient: true, retryAfterMs: 10_000 }, 3_000, 5)).toMatchObject({
      waitMs: 10_000,
    });
    expect(afterFailure(1, { transient: true, retryAfterMs: 900_000 }, 3_000, 5)).toMatchObject({
      waitMs: 60_000,
    });
    expect(afterFailure(1, { transient: true, retryAfterMs: 1 }, 3_000, 5)).toMatchObject({
      waitMs: 3_000,
    });
  });

  it("gives up on the fifth transient failure in a row", () => {
    expect(afterFailure(3, { transient: true }, 3_000, 5).kind).toBe("retry");
    expect(afterFailure(4, { transient: true }, 3_000, 5)).toEqual({
      kind: "give_up",
      failures: 5,
    });
  });

  it("gives up at once on a failure that will not go away", () => {
    expect(afterFailure(0, { transient: false }, 3_000, 5)).toEqual({
      kind: "give_up",
      failures: 1,
    });
  });
});
