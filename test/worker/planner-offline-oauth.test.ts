/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { mermaid } from "../../src/planner/models/offline/draft/plan-writer.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import type { Comment } from "../../src/protocol/index.ts";
import { filesNamedByPlan } from "../bench/planner/plan-files.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { lineOf, listed } from "../support/plan-lists.ts";
import { runUntilStopped } from "./planner/helpers.ts";

/**
 * Issue 12's example, as a new user would try it: a small Node service (password login, a
 * session store, users, a login route, route registration, billing, migrations 001 and 002)
 * and the task "Add GitHub OAuth login that reuses the existing session store and links
 * GitHub identities to users". The plan must change the session store, users, the login
 * route and the route registration, add the OAuth route beside the login route, and leave
 * password hashing and billing alone; feedback asking for a migration must bring the next
 * numbered one. The plans are asserted, not snapshotted wholesale.
 */

const fixture = import.meta.glob("../fixtures/notes-app/**/*", {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;
const FILES = Object.fromEntries(
  Object.entries(fixture).map(([k, v]) => [k.slice("../fixtures/notes-app/".length), v]),
);
const TASK =
  "Add GitHub OAuth login that reuses the existing session store and links GitHub identities to users";

async function firstPlan(variant: "simple" | "visual" = "simple") {
  const port = new MemoryPort({
    files: FILES,
    facts: { planner: "offline", prompt: TASK, variant },
  });
  const planner = offlinePlanner();
  expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
  expect(port.pendingWait()?.kind).toBe("plan");
  return { port, planner, plan: port.readPlan()!.content };
}

async function revise(
  port: MemoryPort,
  planner: ReturnType<typeof offlinePlanner>,
  feedback: string,
  comments: Comment[] = [],
) {
  port.decide(port.pendingWait()!.tool_use_id, { kind: "reject", feedback, comments });
  expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
  const revised = port.readPlan()!;
  expect(revised.revision).toBe(2);
  return revised.content;
}

describe("issue 12's OAuth example on a small Node service", () => {
  it("changes the session store, users, the login route and the route registration, and adds the OAuth route beside the login route", async () => {
    const { plan } = await firstPlan();
    const changes = listed(plan, "Files to change");
    expect(changes).toEqual(
      expect.arrayContaining([
        "src/session/store.js",
        "src/db/users.js",
        "src/routes/login.js",
        "src/routes/index.js",
      ]),
    );
    expect(listed(plan, "New files")).toEqual(["src/routes/github-oauth.js"]);
    expect(changes).not.toContain("src/auth/password.js");
    const everything = ["Files to change", "Files to check", "New files", "Tests"].flatMap((h) =>
      listed(plan, h),
    );
    expect(everything.filter((p) => p.includes("billing"))).toEqual([]);
    expect(listed(plan, "Tests")).toEqual(
      expect.arrayContaining(["test/login.test.js", "test/store.test.js"]),
    );
  });

  it("says per file which symbols and lines the task concerns, and why, with no template filler", async () => {
    const { plan } = await firstPlan();
    expect(lineOf(plan, "src/session/store.js")).toMatch(
      /reuse .*`SessionStore` \(lines \d+–\d+\).*for "reuses the existing session store"\. Evidence: defines `SessionStore`/,
    );
    expect(lineOf(plan, "src/routes/login.js")).toMatch(
      /`loginRoute` \(lines \d+–\d+\).*for "Add GitHub OAuth login".*its name is `login`/,
    );
    expect(lineOf(plan, "src/db/users.js")).toMatch(
      /`findUserByEmail` \(lines \d+–\d+\).*for "links GitHub identities to users"/,
    );
    expect(lineOf(plan, "src/routes/index.js")).toMatch(
      /register `src\/routes\/github-oauth\.js` where the existing ones are registered \(lines \d+–\d+\)/,
    );
    expect(lineOf(plan, "src/routes/github-oauth.js")).toMatch(
      /nothing in the repository covers "github" and "oauth" yet.*modelled on `src\/routes\/login\.js`; registered in `src\/routes\/index\.js`/,
    );
    expect(plan).not.toMatch(/implement the core of the change/i);
    // The steps create the route before registering it, and end with the checks found.
    const steps = plan.slice(plan.indexOf("## Steps"), plan.indexOf("## Verification"));
    expect(steps.indexOf("Create `src/routes/github-oauth.js`")).toBeGreaterThan(-1);
    expect(steps.indexOf("Create `src/routes/github-oauth.js`")).toBeLessThan(
      steps.search(/Register `src\/routes\/github-oauth\.js` .* — in `src\/routes\/index\.js`/),
    );
    expect(plan).toContain("- `npm test` — package.json script");
    expect(plan).toMatch(
      /offline planner.*matched the task's words against the code.*not their meaning/s,
    );
  });

  it("names its ranking first: no repository file before the files to change, and no other file among the listed ones", async () => {
    const { plan } = await firstPlan();
    const repository = new Set(Object.keys(FILES));
    const before = plan.slice(0, plan.indexOf("## Files to change"));
    expect(filesNamedByPlan(before, repository)).toEqual([]);
    // What a line cites as evidence is itself listed, so the first files the plan names (what
    // the planner benchmark scores) are exactly the files to change and to check.
    const ranked = [...listed(plan, "Files to change"), ...listed(plan, "Files to check")];
    const named = filesNamedByPlan(plan, repository).map((f) => f.path);
    expect(new Set(named.slice(0, ranked.length))).toEqual(new Set(ranked));
    expect(named[0]).toBe(ranked[0]);
  });

  it("after 'add a migration for the linked identities table', names the next numbered migration and says why", async () => {
    const { port, planner } = await firstPlan();
    const revised = await revise(
      port,
      planner,
      "Also add a database migration for the linked identities table",
    );
    expect(listed(revised, "New files")).toEqual(
      expect.arrayContaining([
        "migrations/003_linked_identities.sql",
        "src/routes/github-oauth.js",
      ]),
    );
    expect(lineOf(revised, "migrations/003_linked_identities.sql")).toMatch(
      /the next migration after `migrations\/002_invoices\.sql`.*creates the `linked_identities` table/,
    );
    expect(revised).toContain("revision 2");
    expect(revised).toMatch(
      /## Revision notes\n- Added `migrations\/003_linked_identities\.sql`: your feedback asks for a schema change/,
    );
    expect(revised).toContain(
      'Feedback: "Also add a database migration for the linked identities table"',
    );
    const steps = revised.slice(revised.indexOf("## Steps"));
    expect(steps).toMatch(/^1\. Create `migrations\/003_linked_identities\.sql`/m);
    // Applied migrations are never proposed as files to change.
    expect(listed(revised, "Files to change").filter((p) => p.startsWith("migrations/"))).toEqual(
      [],
    );
  });

  it("re-ranks around a commented passage and says so", async () => {
    const { port, planner, plan } = await firstPlan();
    expect(listed(plan, "Files to change")).not.toContain("src/routes/logout.js");
    const revised = await revise(port, planner, "Sign-out must end the GitHub session too.", [
      { quote: "`src/routes/logout.js`", text: "This one as well." },
    ]);
    expect(listed(revised, "Files to change")).toContain("src/routes/logout.js");
    expect(lineOf(revised, "src/routes/logout.js")).toContain("your comment was about it");
    expect(revised).toContain('Comment on "`src/routes/logout.js`": "This one as well."');
  });

  it("drops what the feedback says not to touch, and says so", async () => {
    const { port, planner, plan } = await firstPlan();
    expect(listed(plan, "Files to change")).toContain("src/db/users.js");
    const revised = await revise(
      port,
      planner,
      "Don't touch src/db/users.js; keep the identities next to the session store.",
    );
    const everything = ["Files to change", "Files to check", "New files", "Tests"].flatMap((h) =>
      listed(revised, h),
    );
    expect(everything).not.toContain("src/db/users.js");
    expect(revised).toContain("Dropped `src/db/users.js`: you asked to leave it alone.");
    expect(listed(revised, "Files to change")).toContain("src/session/store.js");
  });

  it("plans the same way every time", async () => {
    const a = await firstPlan();
    const b = await firstPlan();
    expect(b.plan).toBe(a.plan);
  });

  it("draws the visual variant's diagram from the import graph of the files it touches, after the lists", async () => {
    const { plan } = await firstPlan("visual");
    const block = /```mermaid\n([\s\S]*?)\n```/.exec(plan)?.[1] ?? "";
    expect(block.split("\n")[0]).toBe("flowchart LR");
    const nodes = new Map(
      [...block.matchAll(/^ {2}(n\d+)\["([^"]+)"\]$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    const edges = [...block.matchAll(/^ {2}(n\d+) --> (n\d+)$/gm)].map(
      (m) => `${nodes.get(m[1]!)} -> ${nodes.get(m[2]!)}`,
    );
    // The registration wires the new route in; only files with an edge are drawn.
    expect(edges).toContain("src/routes/index.js -> src/routes/github-oauth.js (new)");
    expect(edges.length).toBeGreaterThan(0);
    for (const label of nodes.values()) expect(edges.some((e) => e.includes(label))).toBe(true);
    // The lists still come first, so the plan's first files are its ranking.
    expect(plan.indexOf("## Diagram")).toBeGreaterThan(plan.indexOf("## Files to change"));
    const simple = (await firstPlan("simple")).plan;
    expect(simple).not.toContain("```mermaid");
    expect(plan.replace(/## Diagram[\s\S]*?```mermaid[\s\S]*?```\n\n/, "")).toBe(simple);
  });
});

describe("the offline diagram", () => {
  it("is absent when the files do not import one another (a linear change has no structure)", () => {
    expect(
      mermaid({
        nodes: [
          { path: "a.ts", isNew: false },
          { path: "b.ts", isNew: false },
        ],
        edges: [],
      }),
    ).toBeNull();
  });

  it("cannot be broken out of by a hostile file name", () => {
    const evil = 'src/x"]; click n0 "javascript:alert(1)"<img src=x>.ts';
    const out = mermaid({
      nodes: [
        { path: evil, isNew: false },
        { path: "src/b.ts", isNew: true },
      ],
      edges: [{ from: evil, to: "src/b.ts" }],
    })!;
    const body = /```mermaid\n([\s\S]*?)\n```/.exec(out)![1]!;
    expect(body.split("\n")[1]).toMatch(/^ {2}n0\["[A-Za-z0-9._/#;]+"\]$/);
    expect(body.split("\n")).toHaveLength(4);
    expect(body).toContain("#34;");
    expect(body).toContain('n1["src/b.ts (new)"]');
  });
});
