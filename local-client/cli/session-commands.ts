import { resolve } from "node:path";
import { ApiError, withRetry } from "../api.ts";
import { applyChanges } from "../apply-changes.ts";
import { assertSessionId } from "../sidecar.ts";
import { type Connection, connect, sourceHint } from "./connection.ts";
import { EXIT, exitCodeForError } from "./exit-codes.ts";
import { sessionDetails, sessionTable } from "./table.ts";

/** `status`, `list`, `stop`, `pull`: one API call each, printed for people or as JSON. */

export interface ServerFlags {
  server?: string;
  token?: string;
  json?: boolean;
}

/** Runs `fn` with a connection; maps failures to a message on stderr and an exit code. */
async function withConnection(
  flags: ServerFlags,
  fn: (conn: Connection) => Promise<number>,
): Promise<number> {
  const err = (m: string) => process.stderr.write(`${m}\n`);
  let conn: Connection | null = null;
  try {
    conn = await connect(flags, { note: err, status: err });
    return await fn(conn);
  } catch (e) {
    const hint =
      conn && e instanceof ApiError && e.status === 0 ? ` (${sourceHint(conn.source)})` : "";
    err(`planport: ${e instanceof Error ? e.message : String(e)}${hint}`);
    return exitCodeForError(e);
  } finally {
    await conn?.release().catch(() => {});
  }
}

/**
 * @example
 * process.exitCode = await runStatus("ses_…", { json: true });
 */
export function runStatus(id: string, flags: ServerFlags): Promise<number> {
  return withConnection(flags, async ({ api }) => {
    assertSessionId(id);
    const session = await withRetry(() => api.getSession(id));
    process.stdout.write(
      flags.json ? `${JSON.stringify(session)}\n` : `${sessionDetails(session, Date.now())}\n`,
    );
    return EXIT.ok;
  });
}

/**
 * @example
 * process.exitCode = await runList({});
 */
export function runList(flags: ServerFlags & { limit?: string }): Promise<number> {
  return withConnection(flags, async ({ api }) => {
    const limit = flags.limit === undefined ? 50 : Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      process.stderr.write("planport: --limit must be a whole number from 1 to 100\n");
      return EXIT.usage;
    }
    const list = await withRetry(() => api.listSessions({ limit }));
    process.stdout.write(
      flags.json ? `${JSON.stringify(list)}\n` : `${sessionTable(list.data, Date.now())}\n`,
    );
    return EXIT.ok;
  });
}

/**
 * Archives the session (idempotent): the planner stops, the review page closes decisions.
 *
 * @example
 * process.exitCode = await runStop("ses_…", {});
 */
export function runStop(id: string, flags: ServerFlags): Promise<number> {
  return withConnection(flags, async ({ api }) => {
    assertSessionId(id);
    const session = await withRetry(() => api.archive(id));
    process.stderr.write(`session ${session.id} stopped (${session.status})\n`);
    if (flags.json) process.stdout.write(`${JSON.stringify(session)}\n`);
    return EXIT.ok;
  });
}

/**
 * Prints the remote execution's diff, or applies it with `--apply`.
 *
 * @example
 * process.exitCode = await runPull("ses_…", { apply: true, repo: "." });
 */
export function runPull(
  id: string,
  flags: ServerFlags & { apply?: boolean; repo?: string },
): Promise<number> {
  return withConnection(flags, async ({ api }) => {
    assertSessionId(id);
    const diff = await withRetry(() => api.changes(id));
    if (!flags.apply) {
      process.stdout.write(diff);
      if (diff === "") process.stderr.write(`session ${id} has no changes (yet)\n`);
      return EXIT.ok;
    }
    if (diff === "") {
      process.stderr.write(`session ${id} has no changes to apply (yet)\n`);
      return EXIT.ok;
    }
    const repo = resolve(flags.repo ?? process.cwd());
    const { ok, output } = await applyChanges(repo, diff);
    if (output) process.stderr.write(`${output}\n`);
    if (!ok) {
      process.stderr.write(
        `planport: git apply --3way could not apply the changes in ${repo}; save them with \`planport pull ${id} > changes.diff\` and merge by hand\n`,
      );
      return EXIT.localFailure;
    }
    process.stderr.write(`applied the changes of ${id} in ${repo}\n`);
    return EXIT.ok;
  });
}
