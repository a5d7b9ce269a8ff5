import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Api } from "../../local-client/http/api.ts";
import type { Event } from "../../src/protocol/index.ts";

/** A small git repository to plan against, and a "reviewer" that acts like the browser page. */

/** The fixture repository's files, as committed. */
export const FIXTURE_FILES: Readonly<Record<string, string>> = {
  "README.md": "# Shop\n\nA small web shop. Run `npm test` to test it.\n",
  "package.json": `${JSON.stringify({ name: "shop", scripts: { test: "node --test" } }, null, 2)}\n`,
  "src/auth/session.ts":
    "/** The login session: a signed cookie. */\nexport function readSession(cookie: string) {\n  return cookie.split('.')[0];\n}\n",
  "src/auth/login.ts":
    "import { readSession } from './session';\n\n/** Password login. OAuth login is not supported yet. */\nexport function login(user: string, password: string) {\n  return { user, ok: password.length > 0 };\n}\n",
  "src/db/migrations/001_users.sql": "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT);\n",
  "test/login.test.ts": "import { login } from '../src/auth/login';\n// login tests\n",
};

export function fixtureRepo(): string {
  const repo = mkdtempSync(join(tmpdir(), "planport-fixture-"));
  for (const [path, content] of Object.entries(FIXTURE_FILES)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
  git("init", "-q");
  git("add", ".");
  git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init");
  return repo;
}

/** The id of the ExitPlanMode call still waiting for a decision, if any. */
export async function pendingPlanCall(api: Api, sessionId: string): Promise<string | null> {
  const events: Event[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await api.events(sessionId, { afterId: after, limit: 1000 });
    events.push(...page.data);
    after = page.last_id ?? after;
    if (!page.has_more) break;
  }
  const decided = new Set<string>();
  let open: string | null = null;
  for (const e of events) {
    if (e.type === "user" && typeof e.message.content !== "string") {
      for (const b of e.message.content) if (b.type === "tool_result") decided.add(b.tool_use_id);
    }
    if (e.type === "assistant") {
      for (const b of e.message.content) {
        if (b.type === "tool_use" && b.name === "ExitPlanMode") open = b.id;
      }
    }
  }
  return open !== null && !decided.has(open) ? open : null;
}

/** Waits until an ExitPlanMode is pending (the planner submitted a plan) and returns its id. */
export async function waitForPlan(
  api: Api,
  sessionId: string,
  timeoutMs = 60_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const id = await pendingPlanCall(api, sessionId);
    if (id !== null) return id;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no plan was submitted in session ${sessionId} within ${timeoutMs} ms`);
}
