import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureRepo } from "../client/fixture-repo.ts";
import {
  canSwitchUser,
  chownTree,
  homeFor,
  type InstalledPackage,
  packAndInstall,
  spawnAs,
  treeListing,
  UNPRIVILEGED,
} from "../support/installed-package.ts";

/**
 * The package as a user installs it (issue 23): `npm pack` of this checkout, `npm install -g`
 * of the tarball into a prefix of its own, then the installed `planport` — as root and as an
 * unprivileged user with a home of its own — answers `--help`, serves MCP `initialize` on
 * `planport mcp`, and plans with the embedded worker from inside a repository (no `--repo`)
 * to plan_ready and through a teleport. Nothing may be written inside the installed package.
 */

const TASK = "add GitHub OAuth login next to the password login";
let pkg: InstalledPackage;
let before: Map<string, string>;

beforeAll(async () => {
  pkg = await packAndInstall();
  before = treeListing(pkg.packageDir);
});

afterAll(() => {
  if (pkg) rmSync(pkg.root, { recursive: true, force: true });
});

const users: (string | null)[] = canSwitchUser() ? [null, UNPRIVILEGED] : [null];

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<number | null>;
}

function run(user: string | null, args: string[], cwd: string, home: string): Run {
  const child = spawnAs(user, [pkg.bin, ...args], {
    home,
    cwd,
    path: `${join(pkg.prefix, "bin")}:/usr/local/bin:/usr/bin:/bin`,
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const done = once(child, "exit").then(([code]) => code as number | null);
  return { child, stdout: () => out, stderr: () => err, done };
}

async function lineMatching(r: Run, test: (line: Record<string, unknown>) => boolean) {
  for (;;) {
    const found = r
      .stdout()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find(test);
    if (found) return found;
    if (r.child.exitCode !== null) {
      throw new Error(`planport exited ${r.child.exitCode}:\n${r.stdout()}\n${r.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.each(users)("the installed planport, as %s", (user) => {
  const who = user ?? "this user";
  let home: string;
  let repo: string;

  beforeAll(() => {
    home = homeFor(user, pkg.root, `home-${user ?? "self"}`);
    repo = fixtureRepo();
    if (user !== null) chownTree(repo, user);
  });

  afterAll(async () => {
    // The embedded worker keeps running for open sessions: stop it.
    await run(user, ["embedded", "--stop"], repo, home).done;
  });

  it(`answers --help at once (${who})`, async () => {
    const r = run(user, ["--help"], repo, home);
    expect(await r.done).toBe(0);
    expect(r.stdout()).toContain("Usage: planport");
    expect(r.stdout()).toContain("plan [options]");
  });

  it(`refuses a malformed session id without starting a server (${who})`, async () => {
    const r = run(user, ["status", "hello"], repo, home);
    expect(await r.done).toBe(2);
    expect(r.stderr()).toContain('"hello" is not a session id');
    expect(existsSync(join(home, ".local", "share", "planport", "embedded", "worker.json"))).toBe(
      false,
    );
  });

  it(`serves MCP initialize on planport mcp (${who})`, async () => {
    const r = run(user, ["mcp"], repo, home);
    r.child.stdin?.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "install-smoke", version: "1" },
        },
      })}\n`,
    );
    const answer = await lineMatching(r, (l) => l.id === 1);
    expect(answer).toMatchObject({ result: { serverInfo: { name: "planport" } } });
    r.child.stdin?.end();
    await r.done;
  });

  it(`plans with the embedded worker from inside a repository to plan_ready and takes the teleport (${who})`, async () => {
    const r = run(user, ["plan", TASK, "--json", "--timeout", "10m"], repo, home);
    const session = (await lineMatching(r, (l) => l.event === "session")) as {
      id: string;
      review_url: string;
    };
    await lineMatching(r, (l) => l.event === "phase" && l.phase === "plan_ready");
    // The reviewer sends the plan to this terminal, with the review link's key.
    const url = new URL(session.review_url);
    const key = url.searchParams.get("key") ?? "";
    const headers = { "x-review-key": key, "content-type": "application/json" };
    const pending = (await (
      await fetch(`${url.origin}/v1/sessions/${session.id}`, { headers })
    ).json()) as { pending?: { tool_use_id?: string } };
    const toolUseId = pending.pending?.tool_use_id;
    expect(toolUseId).toBeTruthy();
    const decided = await fetch(`${url.origin}/v1/sessions/${session.id}/decision`, {
      method: "POST",
      headers,
      body: JSON.stringify({ tool_use_id: toolUseId, decision: "teleport" }),
    });
    expect(decided.status).toBe(200);
    const outcome = (await lineMatching(r, (l) => l.event === "outcome")) as {
      kind: string;
      plan_file: string;
    };
    expect(await r.done).toBe(0);
    expect(outcome.kind).toBe("teleport");
    expect(outcome.plan_file.startsWith(join(home, ".planport", "plans"))).toBe(true);
    expect(readFileSync(outcome.plan_file, "utf8")).toContain("OAuth");
    // State, temporary files and logs are under the user's data folder.
    const data = join(home, ".local", "share", "planport");
    expect(existsSync(join(data, "persist", "v3"))).toBe(true);
    expect(existsSync(join(data, "embedded", "worker.log"))).toBe(true);
  });
});

describe("the installed package's folder", () => {
  it("holds what runs and nothing else was written into it", () => {
    const after = treeListing(pkg.packageDir);
    const changed = [...after].filter(([path, stamp]) => before.get(path) !== stamp);
    expect(changed).toEqual([]);
    const files = [...after.keys()].map((p) => p.slice(pkg.packageDir.length + 1));
    expect(files.filter((p) => /^(test|scripts|src)\//.test(p))).toEqual([]);
    expect(files).toContain("dist/cli/planport.js");
    expect(files).toContain("dist/worker/index.js");
    expect(files).toContain("public/review/vendor/mermaid.min.js");
  });
});
