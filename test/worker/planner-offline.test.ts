import { describe, expect, it } from "vitest";
import { step } from "../../src/planner/loop.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { toolResultText } from "../../src/protocol/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { listed, listedFiles } from "../support/plan-lists.ts";
import { generatedRepository } from "./planner/generated-repo.ts";
import {
  pyappFixture,
  recording,
  runUntilStopped,
  shopFixture,
  toolResultsOf,
} from "./planner/helpers.ts";

async function planOffline(task: string) {
  const port = new MemoryPort({
    files: shopFixture(),
    facts: { planner: "offline", prompt: task },
  });
  const planner = recording(offlinePlanner());
  const result = await runUntilStopped(port, { planner });
  return { port, planner, result };
}

describe("the offline planner on the shop fixture", () => {
  it("plans GitHub OAuth login around the auth code, a new migration and the auth tests — not billing or email", async () => {
    const { port, result } = await planOffline(
      "Add GitHub OAuth login that reuses the existing session, with a migration and tests",
    );
    expect(result).toEqual({ next: "wait" });
    expect(port.pendingWait()?.kind).toBe("plan");
    const plan = port.readPlan()!.content;
    const files = listedFiles(plan);
    for (const expected of [
      "src/auth/login.ts",
      "src/auth/session.ts",
      "src/routes/auth.ts",
      "test/auth/login.test.ts",
      "test/auth/session.test.ts",
    ]) {
      expect(files).toContain(expected);
    }
    expect(listed(plan, "New files")).toContain("src/db/migrations/003_github_oauth.sql");
    for (const unrelated of files.filter((f) => /billing|email|catalog|products|orders/.test(f)))
      expect.fail(`unrelated file in plan: ${unrelated}`);
    expect(plan).toContain("offline planner");
    expect(plan).toMatch(/`src\/auth\/session\.ts` — reuse .*`createSession` \(lines \d+–\d+\)/);
    expect(plan).toContain('- `npm test` — package.json script "test": vitest run');
    expect(plan).toContain("- `make test` — Makefile target");
    expect(plan).toContain('Nothing in the repository mentions "github" and "oauth"');
    // The files come first, so the first paths a plan names are its ranking (a README line
    // in the context would otherwise name a translated README before any source file).
    expect(plan).toMatch(
      /## Files to change[\s\S]*## Context[\s\S]*## Steps[\s\S]*## Verification[\s\S]*## Open questions/,
    );
  });

  it("plans invoice rounding in billing with the invoice test — not auth", async () => {
    const { port } = await planOffline(
      "Round invoice totals to two decimals and show VAT separately",
    );
    const files = listedFiles(port.readPlan()!.content);
    expect(files).toEqual(
      expect.arrayContaining([
        "src/billing/invoice.ts",
        "src/billing/tax.ts",
        "test/billing/invoice.test.ts",
      ]),
    );
    expect(files.filter((f) => /auth|session|login|email|catalog/.test(f))).toEqual([]);
    expect(files.indexOf("src/billing/invoice.ts")).toBe(0);
  });

  it("asks one clarifying question with the top-level areas when the task matches nothing, then plans from the answer", async () => {
    const { port, planner } = await planOffline("Translate the storefront into Klingon");
    const wait = port.pendingWait()!;
    expect(wait.kind).toBe("question");
    const questions = (
      wait.input as { questions: { header: string; options: { label: string }[] }[] }
    ).questions;
    expect(questions).toHaveLength(1);
    expect(questions[0]!.header).toBe("Focus area");
    expect(questions[0]!.options.map((o) => o.label)).toEqual(["src/", "test/", "docs/"]);
    expect(port.readPlan()).toBeNull();

    port.answer(wait.tool_use_id, {
      [(wait.input as { questions: { question: string }[] }).questions[0]!.question]: "src/",
    });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    expect(port.pendingWait()?.kind).toBe("plan");
    const plan = port.readPlan()!.content;
    expect(plan).toContain("you chose the area `src/`");
    const files = listedFiles(plan);
    expect(files).toContain("src/app.ts");
    expect(files.every((f) => f.startsWith("src/"))).toBe(true);
    // Exactly one question in the whole session.
    const asked = planner.requests
      .flatMap((r) => r.messages)
      .filter(
        (m) => m.role === "assistant" && JSON.stringify(m.content).includes('"AskUserQuestion"'),
      );
    expect(new Set(asked.map((m) => JSON.stringify(m))).size).toBe(1);
  });

  it("plans anyway when the question goes unanswered (AFK) and says so", async () => {
    const port = new MemoryPort({
      files: shopFixture(),
      facts: {
        planner: "offline",
        prompt: "Translate the storefront into Klingon",
        askTimeoutS: 30,
      },
    });
    const planner = offlinePlanner();
    const waiting = await runUntilStopped(port, { planner });
    expect(waiting.next).toBe("wait");
    port.advance(31_000);
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    const plan = port.readPlan()!.content;
    expect(plan).toContain("The clarifying question went unanswered");
    expect(listedFiles(plan).length).toBeGreaterThan(0);
  });

  it("folds rejection feedback and quoted comments into the next revision", async () => {
    const { port, planner } = await planOffline(
      "Round invoice totals to two decimals and show VAT separately",
    );
    const first = port.readPlan()!.content;
    expect(listedFiles(first)).toContain("src/billing/tax.ts");
    expect(listedFiles(first)).not.toContain("src/billing/currency.ts");

    port.decide(port.pendingWait()!.tool_use_id, {
      kind: "reject",
      feedback:
        "Format the amounts with formatMoney in src/billing/currency.ts. Do not touch src/billing/tax.ts.",
      comments: [
        { quote: "`src/routes/orders.ts`", text: "Leave the routes alone; this is billing only." },
      ],
    });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    const second = port.readPlan()!;
    expect(second.revision).toBe(2);
    const files = listedFiles(second.content);
    expect(files).toContain("src/billing/currency.ts");
    expect(files).toContain("src/billing/invoice.ts");
    expect(files).not.toContain("src/billing/tax.ts");
    expect(files).not.toContain("src/routes/orders.ts");
    expect(second.content).toContain("revision 2");
    expect(second.content).toContain('Feedback: "Format the amounts with formatMoney');
    expect(second.content).toContain("Comment on");
    expect(second.content).toMatch(/`formatmoney`|`format`/);
  });

  it("takes the reviewer's feedback as sent, even when it quotes the headings of the rejection's prose", async () => {
    const { port, planner } = await planOffline(
      "Round invoice totals to two decimals and show VAT separately",
    );
    port.decide(port.pendingWait()!.tool_use_id, {
      kind: "reject",
      feedback:
        "Comments on passages of the plan: none. Format the amounts with formatMoney in src/billing/currency.ts.",
    });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    const second = port.readPlan()!.content;
    expect(second).toContain(
      'Feedback: "Comments on passages of the plan: none. Format the amounts with formatMoney',
    );
    expect(second).not.toContain("Comment on");
    expect(listedFiles(second)).toContain("src/billing/currency.ts");
  });

  it("is deterministic and gives the same plan after a crash in the middle", async () => {
    const task =
      "Add GitHub OAuth login that reuses the existing session, with a migration and tests";
    const a = await planOffline(task);
    const port = new MemoryPort({
      files: shopFixture(),
      facts: { planner: "offline", prompt: task },
    });
    const planner = offlinePlanner();
    let crashes = 0;
    port.crashWhen = (op, detail) =>
      op === "appendEvents" && JSON.stringify(detail).includes("_grep_session") && crashes++ === 0;
    await expect(runUntilStopped(port, { planner })).rejects.toThrow("simulated crash");
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    expect(port.readPlan()!.content).toBe(a.port.readPlan()!.content);
    expect(toolResultsOf(port.listEvents()).map((r) => r.tool_use_id)).toEqual(
      toolResultsOf(a.port.listEvents()).map((r) => r.tool_use_id),
    );
  });

  it("uses the same permission layer: its tool calls are plain tool calls, and it cannot execute", async () => {
    const planner = offlinePlanner();
    expect(planner.canExecuteRemotely).toBe(false);
    const offline = await planOffline("Round invoice totals");
    // The session refuses to approve an offline plan for the cloud (the shared decision rules)…
    expect(() =>
      offline.port.decide(offline.port.pendingWait()!.tool_use_id, { kind: "approve" }),
    ).toThrow("cannot_execute_remotely");
    // …and were the offline planner ever asked to carry one out, it would decline.
    const port = new MemoryPort({
      files: shopFixture(),
      facts: { planner: "anthropic", prompt: "Round invoice totals" },
    });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    port.decide(port.pendingWait()!.tool_use_id, { kind: "approve" });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "idle" });
    const last = port
      .listEvents()
      .filter((e) => e.type === "assistant")
      .at(-1)!;
    expect(JSON.stringify(last.message.content)).toContain("cannot carry out plans");
    expect(port.listOverlay()).toEqual([]);
  });

  it("writes a plan that says the snapshot is missing when there is none", async () => {
    const port = new MemoryPort({
      facts: { planner: "offline", prompt: "Add rate limiting to the API" },
    });
    expect(await runUntilStopped(port, { planner: offlinePlanner() })).toEqual({ next: "wait" });
    const plan = port.readPlan()!.content;
    expect(plan).toContain("No repository snapshot was attached");
    const ls = toolResultsOf(port.listEvents())[0]!;
    expect(toolResultText(ls.content)).toContain("no repository snapshot");
  });

  it("never calls the model twice for one step and stops after ExitPlanMode", async () => {
    const { port } = await planOffline("Round invoice totals");
    expect(await step(port, {}, { planner: offlinePlanner() })).toEqual({ next: "wait" });
  });
});

describe("the offline planner at scale (inside workerd)", () => {
  it("plans on a generated 5,000-file repository and finds the auth area", async () => {
    const port = new MemoryPort({
      files: generatedRepository(5_000),
      facts: {
        planner: "offline",
        prompt: "Add GitHub OAuth login that reuses the existing session",
      },
    });
    expect(await runUntilStopped(port, { planner: offlinePlanner() })).toEqual({ next: "wait" });
    const files = listedFiles(port.readPlan()!.content);
    expect(files).toEqual(
      expect.arrayContaining(["packages/auth/src/login.ts", "packages/auth/src/session.ts"]),
    );
    expect(files.every((f) => f.startsWith("packages/auth/"))).toBe(true);
    // Each term is one streamed pass over the snapshot; the snapshot is never loaded whole.
    expect(port.snapshot.scans).toBeLessThanOrEqual(8);
  });
});

describe("the offline planner on the pyapp fixture (Python)", () => {
  it("plans a password reset email in users and notifications, with pytest as the check", async () => {
    const port = new MemoryPort({
      files: pyappFixture(),
      facts: {
        planner: "offline",
        prompt: "Send a password reset email to users who forgot their password",
      },
    });
    expect(await runUntilStopped(port, { planner: offlinePlanner() })).toEqual({ next: "wait" });
    const plan = port.readPlan()!.content;
    const files = listedFiles(plan);
    expect(files).toEqual(
      expect.arrayContaining([
        "app/users/service.py",
        "app/notifications/mailer.py",
        "tests/test_users.py",
      ]),
    );
    expect(files.filter((f) => f.includes("billing"))).toEqual([]);
    expect(plan).toContain("- `pytest` — pytest in the Python project configuration");
    expect(plan).toContain("- `ruff check .` — pyproject.toml [tool.ruff]");
    expect(plan).toContain("pyapp — Python");
    expect(plan).toMatch(/`app\/users\/service\.py` — .*`hash_password` \(lines \d+–\d+\)/);
    expect(plan).toContain("imported by `app/api/routes.py`");
  });
});
