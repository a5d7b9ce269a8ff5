import { resolve } from "node:path";
import { withRetry } from "../api.ts";
import { applyChanges } from "../apply-changes.ts";
import { assertSessionId } from "../sidecar.ts";
import { terminalJson, terminalLine, terminalText } from "../terminal-text.ts";
import { errorText } from "./advice.ts";
import { type Connection, connect } from "./connection.ts";
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

/**
 * Runs `fn` with a connection; maps failures to a message on stderr (with advice, naming
 * `sessionId` where it helps) and an exit code.
 */
async function withConnection(
  flags: ServerFlags,
  fn: (conn: Connection) => Promise<number>,
  sessionId?: string,
): Promise<number> {
  let conn: Connection | null = null;
  try {
    conn = await connect(flags, { note: err, status: err });
    return await fn(conn);
  } catch (e) {
    err(`planport: ${errorText(e, { source: conn?.source, sessionId })}`);
    return exitCodeForError(e);
  } finally {
    await conn?.release().catch(() => {});
  }
}

/** `planport status <id>`: one session, as a table or (`--json`) as the API answered it. */
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

/** `planport list`: your sessions, newest first (at most `--limit`, 1–100). */
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
 * `planport stop <id>`: archives the session (idempotent); the planner stops, the review page
 * closes decisions.
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

/** `planport pull <id>`: prints the remote execution's diff, or applies it with `--apply`. */
export function runPull(
  id: string,
  flags: ServerFlags & { apply?: boolean; repo?: string },
): Promise<number> {
  return withConnection(
    flags,
    async ({ api }) => {
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
    },
    id,
  );
}
