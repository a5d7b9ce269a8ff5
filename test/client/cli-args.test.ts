import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveServer } from "../../local-client/cli/connection.ts";
import { EXIT, exitCodeForError, exitCodeForReason } from "../../local-client/cli/exit-codes.ts";
import {
  approversFlag,
  plannerFlag,
  planTask,
  pollSettings,
  readSeedPlan,
  SEED_TASK_MAX_CHARS,
  seedPlanText,
  sessionPlanners,
  variantFlag,
} from "../../local-client/cli/flags.ts";
import { portFlag } from "../../local-client/cli/serve.ts";
import { sessionDetails, sessionTable } from "../../local-client/cli/table.ts";
import { formatAge, formatDuration, parseDuration } from "../../local-client/duration.ts";
import { UsageError } from "../../local-client/errors.ts";
import { ApiError } from "../../local-client/http/api.ts";
import type { PollErrorReason } from "../../local-client/poll/error.ts";
import { fakeSession } from "./fake-feed.ts";

describe("durations", () => {
  it.each([
    ["500ms", 500],
    ["3s", 3_000],
    ["1.5s", 1_500],
    ["30m", 1_800_000],
    [" 2m ", 120_000],
  ])("%s = %i ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["3", "3h", "", "-1s", "0s", "s", "1e3ms", "3 seconds"])(
    "refuses %j with a sentence",
    (text) => {
      expect(() => parseDuration(text)).toThrow(/duration|longer than zero/);
    },
  );

  it("formats back in the largest exact unit", () => {
    expect([1_800_000, 90_000, 3_000, 1_500, 0].map(formatDuration)).toEqual([
      "30m",
      "90s",
      "3s",
      "1500ms",
      "0ms",
    ]);
    expect([5_000, 300_000, 7_200_000, 200_000_000].map(formatAge)).toEqual([
      "5s",
      "5m",
      "2h",
      "2d",
    ]);
  });
});

describe("exit codes", () => {
  it("map every poll outcome exactly as docs/PROTOCOL.md", () => {
    const expected: Record<PollErrorReason, number> = {
      terminated: 3,
      timeout_pending: 4,
      timeout_no_plan: 5,
      network_or_unknown: 6,
      extract_marker_missing: 7,
      stopped: 130,
    };
    for (const [reason, code] of Object.entries(expected)) {
      expect(exitCodeForReason(reason as PollErrorReason)).toBe(code);
    }
    expect(EXIT.ok).toBe(0);
    expect(EXIT.usage).toBe(2);
  });

  it("bad input is 2, the server or network failing is 6", () => {
    expect(exitCodeForError(new UsageError("x"))).toBe(2);
    expect(exitCodeForError(new ApiError(400, "invalid_body", "x"))).toBe(2);
    expect(exitCodeForError(new ApiError(413, "snapshot_too_large", "x"))).toBe(2);
    expect(exitCodeForError(new ApiError(0, "network_error", "x"))).toBe(6);
    expect(exitCodeForError(new ApiError(401, "unauthorized", "x"))).toBe(6);
    expect(exitCodeForError(new ApiError(503, "http_503", "x"))).toBe(6);
  });
});

describe("server resolution", () => {
  const config = { url: "http://127.0.0.1:8787", token: "from-config" };
  const env = { PLANPORT_URL: "http://env:1", PLANPORT_TOKEN: "from-env" };

  it("flags, then environment, then the serve config, then the embedded worker", () => {
    expect(resolveServer({ server: "http://flag:2/", token: "f" }, env, config)).toEqual({
      kind: "remote",
      server: "http://flag:2",
      token: "f",
      source: "flags",
    });
    expect(resolveServer({}, env, config)).toMatchObject({
      server: "http://env:1",
      token: "from-env",
      source: "env",
    });
    expect(resolveServer({}, {}, config)).toMatchObject({
      server: config.url,
      token: "from-config",
      source: "config",
    });
    expect(resolveServer({}, {}, null)).toEqual({ kind: "embedded" });
  });

  it("never sends the config's token to another server", () => {
    expect(() => resolveServer({ server: "http://other:1" }, {}, config)).toThrow(
      /no token for http:\/\/other:1/,
    );
    expect(resolveServer({ server: "http://127.0.0.1:8787/" }, {}, config)).toMatchObject({
      token: "from-config",
    });
  });

  it("refuses a server that is not an http(s) URL", () => {
    expect(() => resolveServer({ server: "ftp://x", token: "t" }, {}, null)).toThrow(/http/);
    expect(() => resolveServer({ server: "localhost:8787", token: "t" }, {}, null)).toThrow();
  });
});

describe("flag validation", () => {
  it("pollSettings parses durations and checks the repository", () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-args-"));
    expect(
      pollSettings({ repo: dir, timeout: "10m", interval: "500ms", json: true }),
    ).toMatchObject({
      repoRoot: dir,
      timeoutMs: 600_000,
      intervalMs: 500,
      json: true,
    });
    expect(() => pollSettings({ repo: join(dir, "missing") })).toThrow(UsageError);
    expect(() => pollSettings({ repo: dir, timeout: "forever" })).toThrow(/--timeout/);
  });

  it("planner and port flags", () => {
    expect(plannerFlag("offline")).toBe("offline");
    expect(plannerFlag(undefined)).toBeUndefined();
    expect(() => plannerFlag("gpt")).toThrow(/choose one of auto, offline/);
    expect(portFlag(undefined)).toBe(8787);
    expect(portFlag("9000")).toBe(9000);
    expect(() => portFlag("99999")).toThrow(UsageError);
  });
});

describe("best-of-N flags", () => {
  it("--attempts repeats the planner, --planners names each; 1 to 4 sessions", () => {
    expect(sessionPlanners({})).toEqual([undefined]);
    expect(sessionPlanners({ attempts: "3", planner: "offline" })).toEqual([
      "offline",
      "offline",
      "offline",
    ]);
    expect(sessionPlanners({ planners: "anthropic, openai" })).toEqual(["anthropic", "openai"]);
    for (const attempts of ["0", "5", "2.5", "two"]) {
      expect(() => sessionPlanners({ attempts })).toThrow(/from 1 to 4/);
    }
    expect(() => sessionPlanners({ planners: "a,b,c,d,e" })).toThrow(UsageError);
    expect(() => sessionPlanners({ planners: "offline,gpt" })).toThrow(/choose one of/);
    expect(() => sessionPlanners({ planners: "offline", planner: "offline" })).toThrow(
      /leave out --planner/,
    );
    expect(() => sessionPlanners({ planners: "offline,openai", attempts: "2" })).toThrow(
      /use one of them/,
    );
    expect(variantFlag("visual")).toBe("visual");
    expect(() => variantFlag("thorough")).toThrow(/simple, visual, deep/);
  });
});

describe("--approvers (team review)", () => {
  it("takes comma-separated owner labels and refuses what cannot be one, before any network", () => {
    expect(approversFlag(undefined)).toBeUndefined();
    expect(approversFlag("bob, carol,")).toEqual(["bob", "carol"]);
    expect(() => approversFlag(" , ")).toThrow(UsageError);
    expect(() => approversFlag("Bob")).toThrow(/Bob is not an owner label/);
    expect(() => approversFlag("bob;rm -rf")).toThrow(UsageError);
    expect(() => approversFlag(Array.from({ length: 21 }, (_, i) => `o${i}`).join(","))).toThrow(
      /at most 20/,
    );
  });
});

describe("team review in status and list --awaiting-me", () => {
  it("shows the requester, the approvers and who decided; the awaiting list adds FROM", () => {
    const s = {
      ...fakeSession(),
      requested_by: "alice",
      approvers: ["bob", "carol"],
      decided_by: "bob",
      share_url: "http://127.0.0.1:8787/review/x?key=view",
    };
    const details = sessionDetails(s, Date.parse(s.created_at));
    expect(details).toMatch(/^requester\s+alice$/m);
    expect(details).toMatch(/^approvers\s+bob, carol$/m);
    expect(details).toMatch(/^decided by\s+bob$/m);
    // Each link says what it is for, the deciding one first (issue 26).
    expect(details).toMatch(
      /^review \(decides\)\s+\S+\n^share \(read-only\)\s+http:\/\/127\.0\.0\.1:8787\/review\/x\?key=view$/m,
    );
    const table = sessionTable([s], Date.parse(s.created_at), { requester: true });
    expect(table.split("\n")[0]).toMatch(/^ID\s+TITLE\s+FROM\s+STATUS\s+PHASE/);
    expect(table.split("\n")[1]).toMatch(/\salice\s/);
    expect(sessionTable([s], Date.parse(s.created_at)).split("\n")[0]).not.toContain("FROM");
  });
});

describe("--seed-plan and the optional task", () => {
  const stdin = (text: string | Uint8Array, terminal = false) => ({
    stdin: async () => (typeof text === "string" ? new TextEncoder().encode(text) : text),
    stdinIsTerminal: terminal,
  });

  it("reads the draft from a file, or from stdin with -, exactly as written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-seed-"));
    const file = join(dir, "draft.md");
    const draft = "# Add OAuth\r\n\n1. Add the route — ünïcode ✓\n";
    writeFileSync(file, draft);
    expect(await readSeedPlan(file, stdin("unused"))).toBe(draft);
    expect(await readSeedPlan("-", stdin("# From stdin\n"))).toBe("# From stdin\n");
    expect(await readSeedPlan(undefined, stdin("ignored"))).toBeUndefined();
  });

  it("refuses a missing file, a directory, an empty, binary or too long draft with a sentence naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-seed-bad-"));
    const at = (name: string, content?: string | Uint8Array) => {
      const path = join(dir, name);
      if (content !== undefined) writeFileSync(path, content);
      return path;
    };
    mkdirSync(join(dir, "folder"));
    const cases: [string, RegExp][] = [
      [at("missing.md"), /missing\.md: there is no file/],
      [at("folder"), /folder is a directory/],
      [at("empty.md", ""), /empty\.md is empty/],
      [at("blank.md", "  \n\t\n"), /blank\.md is empty/],
      [
        at("latin1.md", new Uint8Array([0x23, 0x20, 0xe9, 0x74, 0xe9])),
        /latin1\.md is not UTF-8 text/,
      ],
      [at("nul.md", "# a\u0000b"), /nul\.md is not text/],
      [
        at("long.md", "x".repeat(200_001)),
        /long\.md is too long \(200001 characters\).*at most 200000/,
      ],
      [at("huge.md", "x".repeat(800_001)), /huge\.md is too long/],
    ];
    for (const [path, message] of cases) {
      const refused = readSeedPlan(path, stdin("unused"));
      await expect(refused, path).rejects.toThrow(UsageError);
      await expect(readSeedPlan(path, stdin("unused")), path).rejects.toThrow(message);
    }
    // 200,000 characters is the limit itself, counted as the server counts them.
    expect(await readSeedPlan(at("max.md", "é".repeat(200_000)), stdin(""))).toHaveLength(200_000);
    await expect(readSeedPlan("-", stdin(""))).rejects.toThrow(/--seed-plan - \(stdin\) is empty/);
    await expect(readSeedPlan("-", stdin("# x", true))).rejects.toThrow(
      /stdin, which is a terminal/,
    );
    expect(() => seedPlanText(new Uint8Array([0xff]), "d.md")).toThrow(/d\.md is not UTF-8/);
  });

  it("takes the task's words, else derives one short line from the draft, else refuses", () => {
    expect(planTask(["add", "OAuth"], "# Other")).toBe("add OAuth");
    expect(planTask([], "Intro line\n\n## Add GitHub login ##\n- step\n")).toBe(
      "Refine this plan: Add GitHub login",
    );
    expect(planTask([" "], "no heading at all\nsecond line")).toBe(
      "Refine this plan: no heading at all",
    );
    expect(planTask([], "#\n\n\u001b[31m# Evil\u0007 title\u001b[0m\n")).toBe(
      "Refine this plan: Evil title",
    );
    const long = planTask([], `# ${"word ".repeat(100)}`);
    expect(long.length).toBeLessThanOrEqual(SEED_TASK_MAX_CHARS);
    expect(long).not.toContain("\n");
    expect(long.endsWith("…")).toBe(true);
    expect(() => planTask([], undefined)).toThrow(UsageError);
    expect(() => planTask(["  "], undefined)).toThrow(/--seed-plan FILE/);
  });
});

describe("session table", () => {
  it("shows id, title, status, phase, keep planning, cost, age and review link", () => {
    const s = fakeSession({
      reject_count: 2,
      phase: "plan_ready",
      status: "requires_action",
      usage: { input_tokens: 1_000, output_tokens: 200, cost_usd: 0.00734 },
    });
    const unpriced = fakeSession({ usage: { input_tokens: 5, output_tokens: 1, cost_usd: null } });
    const now = Date.parse(s.created_at) + 5 * 60_000;
    const [header, row, second] = sessionTable([s, unpriced], now).split("\n");
    expect(header?.split(/\s{2,}/)).toEqual([
      "ID",
      "TITLE",
      "STATUS",
      "PHASE",
      "OUTCOME",
      "KEEP PLANNING",
      "COST",
      "AGE",
      "REVIEW",
    ]);
    expect(row?.split(/\s{2,}/)).toEqual([
      s.id,
      s.title,
      "requires_action",
      "plan ready",
      "—",
      "2",
      "$0.0073",
      "5m",
      s.review_url,
    ]);
    expect(second?.split(/\s{2,}/)[6]).toBe("—");
  });

  it("the status of a session shows its variant, group and cost", () => {
    const s = fakeSession({
      variant: "deep",
      group: "bo3-x",
      usage: { input_tokens: 1, output_tokens: 1, cost_usd: 1.5 },
    });
    const details = sessionDetails(s, Date.parse(s.created_at));
    expect(details).toMatch(/^variant\s+deep$/m);
    expect(details).toMatch(/^group\s+bo3-x$/m);
    expect(details).toMatch(/^cost\s+\$1\.50$/m);
    expect(sessionDetails(fakeSession(), 0)).toMatch(/^cost\s+unknown$/m);
  });

  it("says how to start when there are no sessions", () => {
    expect(sessionTable([], 0)).toMatch(/planport plan/);
  });
});
