import type { Session } from "../../src/protocol/index.ts";
import { saveTeleportedPlan } from "../handoff/teleport.ts";
import { withRetry } from "../http/api.ts";
import { PollError, type PollProgress } from "../poll/error.ts";
import { type PollPhase, pollForApprovedExitPlanMode, systemClock } from "../poll/poller.ts";
import {
  acquirePollLock,
  loadSidecar,
  RESUMABLE,
  removeSidecar,
  saveSidecar,
} from "../poll/sidecar.ts";
import { terminalLine } from "../terminal/text.ts";
import type { ConnectionHolder } from "./connection.ts";
import { errorResult } from "./errors.ts";
import { type ToolText, toolError, waitResultText } from "./texts.ts";
import { DEFAULT_WAIT_S, type WaitArgs } from "./tools.ts";

/**
 * `wait_for_plan`: the CLI's poll (poller.ts, the scanner, the sidecar and the poll lock), run
 * by the MCP server. While it polls, the server counts this process as the terminal waiting for
 * the plan, so the review page offers "Approve and send to terminal". Its progress is saved in the
 * session's sidecar, so the next call (or `planport attach`) carries on without recounting
 * rejections.
 */

/** How often a waiting call tells the client it is alive (some clients time out without). */
export const PROGRESS_HEARTBEAT_MS = 15_000;

/** Sends an MCP progress notification; a no-op when the client sent no progress token. */
export type Progress = (message: string) => void;

/**
 * The phase as a progress message.
 *
 * @example
 * phaseMessage("plan_ready", "http://…/review/ses_…") // → "plan ready for review: http://…"
 */
export function phaseMessage(phase: PollPhase, reviewUrl: string): string {
  const link = terminalLine(reviewUrl);
  switch (phase) {
    case "running":
      return "planning: the remote planner is exploring the repository";
    case "needs_input":
      return `needs input: the planner asked a question; answer it on the review page ${link}`;
    case "plan_ready":
      return `plan ready for review: ${link}`;
  }
}

export interface WaitContext {
  connection: ConnectionHolder;
  /** Sessions this process waits for now (the pid lock cannot tell two calls of one process apart). */
  waiting: Set<string>;
  signal: AbortSignal;
  progress: Progress;
  /** Where plan files go when the session's sidecar names no repository. */
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Waits for the session's plan, at most `timeout_s`; resolves with the tool's answer (never
 * throws).
 */
export async function waitForPlan(args: WaitArgs, ctx: WaitContext): Promise<ToolText> {
  const id = args.session_id;
  if (ctx.waiting.has(id)) {
    return toolError(
      `wait_for_plan is already waiting for ${id} in this planport MCP server; wait for that call to return.`,
    );
  }
  let release = () => {};
  ctx.waiting.add(id);
  try {
    release = acquirePollLock(id, ctx.env);
    const sidecar = loadSidecar(id, ctx.env);
    const conn = await ctx.connection.get();
    const timeoutMs = (args.timeout_s ?? DEFAULT_WAIT_S) * 1000;
    // The wait counts from here: reading the session is part of it.
    const startedAt = systemClock.now();
    const session: Session = await withRetry(
      () => conn.api.getSession(id, { signal: ctx.signal }),
      ctx.signal,
    );
    const reviewUrl = session.review_url;
    const repo = sidecar?.repo ?? ctx.cwd;
    const save = (progress: PollProgress) =>
      saveSidecar({ sessionId: id, server: conn.server, reviewUrl, repo, progress }, ctx.env);
    let phase: PollPhase = "running";
    ctx.progress(`waiting for the plan of ${terminalLine(id)}: ${phaseMessage(phase, reviewUrl)}`);
    const heartbeat = setInterval(() => {
      const waited = Math.round((systemClock.now() - startedAt) / 1000);
      ctx.progress(`${phaseMessage(phase, reviewUrl)} (waited ${waited} s)`);
    }, PROGRESS_HEARTBEAT_MS);
    heartbeat.unref();
    try {
      const outcome = await pollForApprovedExitPlanMode({
        server: conn.server,
        token: conn.token,
        sessionId: id,
        timeoutMs,
        signal: ctx.signal,
        resume: sidecar ? { cursor: sidecar.cursor, scanner: sidecar.scanner } : undefined,
        startedAt,
        onPhaseChange: (next) => {
          phase = next;
          ctx.progress(phaseMessage(next, reviewUrl));
        },
        onRejected: (n) => ctx.progress(`keep planning (${n} so far): the planner is revising`),
        onTransientFailure: (n, err) =>
          ctx.progress(`cannot reach the server (${n} in a row): ${terminalLine(err.message)}`),
      });
      removeSidecar(id, ctx.env);
      if (outcome.kind === "approved") {
        return waitResultText({ kind: "approved", session, rejectCount: outcome.rejectCount });
      }
      let planFile: string | null = null;
      try {
        planFile = saveTeleportedPlan({
          plan: outcome.plan,
          title: session.title,
          repoRoot: repo,
          env: ctx.env,
        });
      } catch (err) {
        process.stderr.write(
          `planport mcp: could not save the teleported plan: ${terminalLine(String(err))}\n`,
        );
      }
      return waitResultText({
        kind: "teleport",
        session,
        plan: outcome.plan,
        rejectCount: outcome.rejectCount,
        planFile,
      });
    } catch (err) {
      if (!(err instanceof PollError)) throw err;
      if (RESUMABLE.has(err.reason)) save(err.progress);
      else removeSidecar(id, ctx.env);
      return waitResultText({ kind: "poll_error", error: err, reviewUrl });
    } finally {
      clearInterval(heartbeat);
    }
  } catch (err) {
    return errorResult(err, { source: ctx.connection.source(), sessionId: id });
  } finally {
    release();
    ctx.waiting.delete(id);
  }
}
