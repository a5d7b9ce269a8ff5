import { resolve } from "node:path";
import { ApiError, withRetry } from "../api.ts";
import { applyChanges } from "../apply-changes.ts";
import { assertSessionId } from "../sidecar.ts";
import { terminalJson, terminalLine, terminalText } from "../terminal-text.ts";
import { type Connection, connect, sourceHint } from "./connection.ts";
import { EXIT, exitCodeForError } from "./exit-codes.ts";
import { sessionDetails, sessionTable } from "./table.ts";

/**
 * `status`, `list`, `stop`, `pull`: one API call each, printed for people or as JSON. What the
 * server sent is made terminal-safe on the way out (terminal-text.ts); JSON stays exact.
 */

export interface ServerFlags {
  server?: string;
  token?: string;
  json?: boolean;
}

/** A line on stderr; what it quotes from the server is made terminal-safe. */
function err(message: string): void {
  process.stderr.write(`${terminalText(message)}\n`);
}

/** Runs `fn` with a connection; maps failures to a message on stderr and an exit code. */
async function withConnection(
  flags: ServerFlags,
  fn: (conn: Connection) => Promise<number>,
): Promise<number> {
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
      flags.json ? `${terminalJson(session)}\n` : `${sessionDetails(session, Date.now())}\n`,
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
      err("planport: --limit must be a whole number from 1 to 100");
      return EXIT.usage;
    }
    const list = await withRetry(() => api.listSessions({ limit }));
    process.stdout.write(
      flags.json ? `${terminalJson(list)}\n` : `${sessionTable(list.data, Date.now())}\n`,
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
    err(`session ${terminalLine(session.id)} stopped (${session.status})`);
    if (flags.json) process.stdout.write(`${terminalJson(session)}\n`);
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
      // Redirected, the diff is data and stays byte for byte; on a terminal it is for reading.
      process.stdout.write(process.stdout.isTTY ? terminalText(diff) : diff);
      if (diff === "") err(`session ${id} has no changes (yet)`);
      return EXIT.ok;
    }
    if (diff === "") {
      err(`session ${id} has no changes to apply (yet)`);
      return EXIT.ok;
    }
    const repo = resolve(flags.repo ?? process.cwd());
    const { ok, output } = await applyChanges(repo, diff);
    if (output) err(output);
    if (!ok) {
      err(
        `planport: git apply --3way could not apply the changes in ${repo}; save them with \`planport pull ${id} > changes.diff\` and merge by hand`,
      );
      return EXIT.localFailure;
    }
    err(`applied the changes of ${id} in ${repo}`);
    return EXIT.ok;
  });
}
