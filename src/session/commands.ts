import type { Env } from "../env.ts";
import { ExecutorClient } from "../execution/client.ts";
import { containerTransport } from "../execution/container-transport.ts";
import { type ContainerExecutor, type Execution, executionFor } from "../execution/executor.ts";
import { sessionCommands } from "../execution/session-commands.ts";
import type { CommandRun, SessionCommands, SnapshotFiles } from "../planner/port.ts";
import {
  fail,
  isTestCommand,
  type LastTestRun,
  type Refusal,
  type WorkspaceFile,
} from "../protocol/index.ts";
import { listOverlay, readOverlay } from "./files/overlay.ts";
import { hasEnded, type SessionRow } from "./session-row.ts";

/**
 * A session's remote execution as the session object holds it: where its commands run
 * (execution/executor.ts), the record of each command, and the container's end. The executor
 * is asked before *approve* is accepted, so a worker without one says so before anything
 * starts; the container is released when the execution ends (its idle timer and the next
 * executor start reap it if that call is lost).
 */

/** Where this session's commands run. */
export function executionOf(env: Env, row: SessionRow): Execution {
  return executionFor(env, row.id, containersOf(env));
}

/** Cloudflare Containers, when the worker has the binding (wrangler.toml `[[containers]]`). */
function containersOf(env: Env): ContainerExecutor | null {
  if (env.EXECUTOR_CONTAINERS === undefined) return null;
  return (sessionId) =>
    new ExecutorClient(containerTransport(env, sessionId), "The session's Cloudflare container");
}

/**
 * The session's commands for the planning engine: null when its execution runs none; when the
 * executor went away since the approval, each command fails with the reason.
 */
export function commandsOf(
  execution: Execution,
  row: SessionRow,
  sql: SqlStorage,
  snapshot: SnapshotFiles,
): SessionCommands | null {
  if (execution.kind === "overlay") return null;
  if (execution.kind === "unavailable") {
    return {
      where: "no executor",
      run: async () => {
        throw new Error(execution.reason);
      },
    };
  }
  return sessionCommands(execution.client, row.id, snapshot, () => overlayFiles(sql));
}

/**
 * Refuses an approval when commands cannot run: no executor, or one that says it cannot (Docker
 * not running, its image missing). Null when the approval may go ahead.
 */
export async function refuseWithoutExecutor(execution: Execution): Promise<Refusal | null> {
  if (execution.kind === "overlay") return null;
  const reason =
    execution.kind === "unavailable" ? execution.reason : await unhealthy(execution.client);
  if (reason === null) return null;
  return fail(
    409,
    "executor_unavailable",
    `Nothing was started: running the plan in the cloud needs a container. ${reason} Send the plan to your terminal instead (teleport), or keep planning.`,
  );
}

async function unhealthy(client: ExecutorClient): Promise<string | null> {
  const health = await client.health();
  if (health.ok) return null;
  return `${client.where} cannot run one: ${health.reason ?? "it gave no reason."}`;
}

/**
 * Releases the session's container once its execution is over (finished, or the session
 * ended) since `before`. Best effort: a lost release is reaped by the container's idle timer.
 */
export async function releaseIfExecuted(
  execution: Execution,
  before: SessionRow,
  after: SessionRow | null,
): Promise<void> {
  if (execution.kind !== "commands" || after === null || after.outcome_kind !== "approved") return;
  const over = (row: SessionRow) => row.executed === 1 || hasEnded(row);
  if (over(before) || !over(after)) return;
  try {
    await execution.client.release(after.id);
  } catch (err) {
    console.error(`planport: ${after.id}'s container is left to its idle timer`, err);
  }
}

/** Records one command `Bash` ran, with its tool result (same transaction). */
export function recordCommandRun(sql: SqlStorage, run: CommandRun, nowMs: number): void {
  sql.exec(
    `INSERT INTO command_runs (tool_use_id, command, exit_code, timed_out, duration_ms, is_test, finished_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    run.toolUseId,
    run.command,
    run.exitCode,
    run.timedOut ? 1 : 0,
    run.durationMs,
    isTestCommand(run.command) ? 1 : 0,
    nowMs,
  );
}

/** The last test run, or null before one ran. */
export function lastTestRun(sql: SqlStorage): LastTestRun | null {
  const row = sql
    .exec<{
      command: string;
      exit_code: number | null;
      timed_out: number;
      duration_ms: number;
      finished_at: number;
    }>(
      "SELECT command, exit_code, timed_out, duration_ms, finished_at FROM command_runs WHERE is_test = 1 ORDER BY seq DESC LIMIT 1",
    )
    .toArray()[0];
  if (row === undefined) return null;
  return {
    command: row.command,
    exit_code: row.exit_code,
    timed_out: row.timed_out === 1,
    duration_ms: row.duration_ms,
    at: new Date(row.finished_at).toISOString(),
  };
}

/** The overlay as the files a run writes first. */
function overlayFiles(sql: SqlStorage): WorkspaceFile[] {
  return listOverlay(sql).map((path) => ({ path, content: readOverlay(sql, path) ?? null }));
}
