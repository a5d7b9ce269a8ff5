import { resolve } from "node:path";
import {
  adherenceSentence,
  type PlanAdherence,
  planAdherence,
  type Session,
} from "../../src/protocol/index.ts";
import {
  ApplyRefusedError,
  applyChanges,
  assertNewBranch,
  checkChanges,
} from "../handoff/apply-changes.ts";
import { diffPaths } from "../handoff/diff-names.ts";
import { withRetry } from "../http/api.ts";
import { assertSessionId } from "../poll/sidecar.ts";
import { terminalJson, terminalLine, terminalText } from "../terminal/text.ts";
import { errorText } from "./advice.ts";
import { type Connection, connect } from "./connection.ts";
import { EXIT, exitCodeForError } from "./exit-codes.ts";
import { checkText, type PullFlags, pullMode } from "./pull-check.ts";
import { sessionDetails, sessionTable } from "./table.ts";

/**
 * `status`, `list`, `stop`, `pull`: one API call each, printed for people or as JSON. What the
 * server sent is made terminal-safe on the way out (terminal/text.ts); JSON stays exact.
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
 * `sessionId` where it helps) and an exit code. A malformed `sessionId` is refused before any
 * server is reached or started.
 */
async function withConnection(
  flags: ServerFlags,
  fn: (conn: Connection) => Promise<number>,
  sessionId?: string,
): Promise<number> {
  let conn: Connection | null = null;
  try {
    if (sessionId !== undefined) assertSessionId(sessionId);
    conn = await connect(flags, { note: err, status: err });
    return await fn(conn);
  } catch (e) {
    err(`planport: ${errorText(e, { source: conn?.source, sessionId })}`);
    return exitCodeForError(e);
  } finally {
    await conn?.release().catch(() => {});
  }
}

/**
 * `planport status <id>`: one session, as a table or (`--json`) as the API answered it. After
 * a remote execution it adds the plan adherence — which changed files the approved plan named
 * (src/protocol/plan-paths.ts, the review page's reading) — as a line, or in JSON as the
 * additive `plan_adherence` field. A failure to read it never fails the status.
 */
export function runStatus(id: string, flags: ServerFlags): Promise<number> {
  return withConnection(
    flags,
    async ({ api }) => {
      const session = await withRetry(() => api.getSession(id));
      const adherence = executedRemotely(session) ? await readAdherence(api, id) : null;
      if (flags.json) {
        const extra = adherence?.ok ? { plan_adherence: adherence.value } : {};
        process.stdout.write(`${terminalJson({ ...session, ...extra })}\n`);
        return EXIT.ok;
      }
      const extra: [string, string][] = adherence
        ? [
            [
              "adherence",
              adherence.ok
                ? adherence.value.sentence
                : `could not be read: ${errorText(adherence.error, { sessionId: id })}`,
            ],
          ]
        : [];
      process.stdout.write(`${sessionDetails(session, Date.now(), extra)}\n`);
      return EXIT.ok;
    },
    id,
  );
}

function executedRemotely(session: Session): boolean {
  return session.outcome?.kind === "approved" && session.phase === "done";
}

type StatusApi = Connection["api"];

async function readAdherence(
  api: StatusApi,
  id: string,
): Promise<
  { ok: true; value: PlanAdherence & { sentence: string } } | { ok: false; error: unknown }
> {
  try {
    const [plan, diff] = await Promise.all([
      withRetry(() => api.plan(id)),
      withRetry(() => api.changes(id)),
    ]);
    const adherence = planAdherence(plan.content, diffPaths(diff));
    return { ok: true, value: { ...adherence, sentence: adherenceSentence(adherence) } };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * `planport list`: your sessions, newest first (at most `--limit`, 1–100); with
 * `--awaiting-me`, the sessions waiting for your approval instead (team review).
 */
export function runList(
  flags: ServerFlags & { limit?: string; awaitingMe?: boolean },
): Promise<number> {
  return withConnection(flags, async ({ api }) => {
    const limit = flags.limit === undefined ? 50 : Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      err("planport: --limit must be a whole number from 1 to 100");
      return EXIT.usage;
    }
    const list = await withRetry(() =>
      api.listSessions({ limit, ...(flags.awaitingMe === true && { awaiting: "me" as const }) }),
    );
    if (flags.awaitingMe === true && list.data.length === 0 && !flags.json) {
      err("no session is waiting for your approval");
      return EXIT.ok;
    }
    process.stdout.write(
      flags.json
        ? `${terminalJson(list)}\n`
        : `${sessionTable(list.data, Date.now(), { requester: flags.awaitingMe === true })}\n`,
    );
    return EXIT.ok;
  });
}

/**
 * `planport stop <id>`: archives the session (idempotent); the planner stops, the review page
 * closes decisions.
 */
export function runStop(id: string, flags: ServerFlags): Promise<number> {
  return withConnection(
    flags,
    async ({ api }) => {
      const session = await withRetry(() => api.archive(id));
      err(`session ${terminalLine(session.id)} stopped (${session.status})`);
      if (flags.json) process.stdout.write(`${terminalJson(session)}\n`);
      return EXIT.ok;
    },
    id,
  );
}

/**
 * `planport pull <id>`: prints the remote execution's diff; `--check` says whether it would
 * apply cleanly here (exit 0) or what is in the way (exit 1), writing nothing; `--apply`
 * applies it, on a new branch with `--branch NAME`.
 */
export function runPull(id: string, flags: ServerFlags & PullFlags): Promise<number> {
  const repo = resolve(flags.repo ?? process.cwd());
  let mode: ReturnType<typeof pullMode>;
  try {
    mode = pullMode(flags);
    // Before any network: a bad or taken branch name is known here and now.
    if (flags.branch !== undefined) assertNewBranch(repo, flags.branch);
  } catch (e) {
    err(`planport: ${errorText(e, { sessionId: id })}`);
    return Promise.resolve(exitCodeForError(e));
  }
  return withConnection(
    flags,
    async ({ api }) => {
      const diff = await withRetry(() => api.changes(id));
      if (mode === "print") {
        // Redirected, the diff is data and stays byte for byte; on a terminal it is for reading.
        process.stdout.write(process.stdout.isTTY ? terminalText(diff) : diff);
        if (diff === "") err(`session ${id} has no changes (yet)`);
        return EXIT.ok;
      }
      if (diff === "") {
        err(`session ${id} has no changes to ${mode} (yet)`);
        return EXIT.ok;
      }
      if (mode === "check") return checkPull(id, repo, diff);
      const { ok, output } = await applyChanges(repo, diff, { branch: flags.branch });
      if (output) err(output);
      const onBranch = flags.branch === undefined ? "" : ` on the new branch ${flags.branch}`;
      if (!ok) {
        err(
          `planport: git apply --3way could not apply the changes in ${repo}${onBranch}; save them with \`planport pull ${id} > changes.diff\` and merge by hand`,
        );
        return EXIT.localFailure;
      }
      err(`applied the changes of ${id} in ${repo}${onBranch}`);
      return EXIT.ok;
    },
    id,
  );
}

/** `pull --check`: the report on stdout; 0 when it would apply cleanly, 1 when not. */
function checkPull(id: string, repo: string, diff: string): number {
  try {
    const check = checkChanges(repo, diff);
    process.stdout.write(`${checkText(check, repo, id)}\n`);
    return check.appliesCleanly ? EXIT.ok : EXIT.localFailure;
  } catch (e) {
    // A diff that would be refused does not apply cleanly: that is the answer, not a misuse.
    if (!(e instanceof ApplyRefusedError) || e.reason === "not_a_work_tree") throw e;
    err(`planport: ${errorText(e, { sessionId: id })}`);
    return EXIT.localFailure;
  }
}
