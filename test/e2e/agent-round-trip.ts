import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import type { Api } from "../../local-client/http/api.ts";
import { eventually } from "../support/eventually.ts";

/**
 * What the end-to-end tests of the agent clients (Codex CLI, Gemini CLI) share: running the
 * real client as a child process, finding the planport session it started, and playing the
 * reviewer who sends the plan to the waiting agent ("approve and send here") over the HTTP API.
 */

export interface AgentRun {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Starts `bin args` in `cwd` with exactly `env`, stdin closed, its output collected. */
export function startAgent(
  bin: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string> },
): AgentRun {
  const child = spawn(bin, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const done = once(child, "exit").then(([code]) => ({
    code: code as number | null,
    stdout,
    stderr,
  }));
  return { child, done };
}

/**
 * The id of the session the agent started (created after `since`). If the agent exits first,
 * fails with what it printed and `asked()` — what its model was asked.
 */
export async function sessionStartedBy(
  run: AgentRun,
  api: Api,
  since: number,
  asked: () => Promise<string>,
): Promise<string> {
  let exited = false;
  let found = false;
  const failure = run.done.then(async ({ code, stdout, stderr }) => {
    exited = true;
    if (found) return "";
    throw new Error(
      `the agent exited (${code}) before starting a session:\n${stdout}\n${stderr}\nits model was asked:\n${await asked()}`,
    );
  });
  failure.catch(() => {});
  const started = eventually(
    async () => {
      if (exited) return "(the agent exited)"; // stops polling; `failure` has the verdict
      const { data } = await api.listSessions({ limit: 5 });
      return data.find((s) => Date.parse(s.created_at) >= since - 1000)?.id;
    },
    { interval: 250 },
  );
  const id = await Promise.race([failure, started]);
  found = true;
  return id as string;
}

/**
 * Waits until the session's plan waits for a decision while a terminal (here: the agent's
 * `planport mcp`, inside wait_for_plan) polls it, then sends the plan there, as the review
 * page's "approve and send here" does.
 */
export async function teleportWhenReady(api: Api, id: string): Promise<void> {
  const toolUseId = await eventually(
    async () => {
      const session = await api.getSession(id);
      return session.pending?.kind === "plan" && session.terminal_polled_at
        ? session.pending.tool_use_id
        : undefined;
    },
    { interval: 250 },
  );
  await api.decide(id, { tool_use_id: toolUseId as string, decision: "teleport" });
}

/** The first session id (`ses_…`) in a text. */
export function sessionIdIn(text: string): string | undefined {
  return /\bses_[0-9a-z]{26}\b/.exec(text)?.[0];
}

/** Whether a wait_for_plan result says the plan is still under review (or being planned). */
export function stillWaiting(text: string): boolean {
  return /(^|\n)Still (waiting|planning)/.test(text);
}
