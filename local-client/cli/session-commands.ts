import { resolve } from "node:path";
import {
  adherenceSentence,
  type PlanAdherence,
  planAdherence,
  readableText,
  type Session,
  testRunSentence,
} from "../../src/protocol/index.ts";
import { UsageError } from "../errors.ts";
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
import { EXIT } from "./exit-codes.ts";
import { type CommandOutput, commandOutput } from "./output.ts";
import { checkText, type PullFlags, pullMode } from "./pull-check.ts";
import { refusePull, refuseStop } from "./sentences.ts";
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

/**
 * Runs `fn` with a connection; maps failures to the error line or sentence (with advice, naming
 * `sessionId` where it helps) and an exit code (output.ts). A malformed `sessionId` is refused
 * before any server is reached or started. A read-only command (`readOnly`) never starts the
 * embedded worker: it says it is not running, and how to see its sessions.
 */
async function withConnection(
  flags: ServerFlags,
  fn: (conn: Connection, out: CommandOutput) => Promise<number>,
  sessionId?: string,
  readOnly = false,
): Promise<number> {
  const out = commandOutput(flags.json === true);
  let conn: Connection | null = null;
  try {
    if (sessionId !== undefined) assertSessionId(sessionId);
    conn = await connect(flags, { note: out.say, status: out.say }, process.env, {
      start: !readOnly,
    });
    return await fn(conn, out);
  } catch (e) {
    return out.fail(e, { source: conn?.source, sessionId });
  } finally {
    await conn?.release().catch(() => {});
  }
}

/**
 * `planport show <id>`: the plan's text — the latest revision, or `--revision N` — as the
 * review page showed it (protocol `readableText`: a hidden character arrives as its mark, so
 * the output is safe on a terminal and is what a reviewer approved); `--json` prints the plan
 * file as the API answered it. Before the planner wrote a plan it prints nothing and says so
 * on stderr. Read-only: it never starts the embedded worker.
 */
export function runShow(id: string, flags: ServerFlags & { revision?: string }): Promise<number> {
  return withConnection(
    flags,
    async ({ api }, out) => {
      const revision = revisionFlag(flags.revision);
      const plan = await withRetry(() => api.plan(id, revision === undefined ? {} : { revision }));
      if (flags.json) {
        process.stdout.write(`${terminalJson(plan)}\n`);
        return EXIT.ok;
      }
      if (plan.revision === 0) {
        out.say(`No plan yet: the planner has not written one (planport status ${id}).`);
        return EXIT.ok;
      }
      const text = readableText(plan.content);
      process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
      return EXIT.ok;
    },
    id,
    true,
  );
}

/** `--revision N`: a whole number from 1. */
function revisionFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--revision must be a whole number from 1 (got ${terminalLine(text)})`);
  }
  return n;
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
      // What the session's last test run came to (remote execution with commands).
      if (session.last_test_run) extra.push(["tests", testRunSentence(session.last_test_run)]);
      process.stdout.write(`${sessionDetails(session, Date.now(), extra)}\n`);
      return EXIT.ok;
    },
    id,
    true,
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
  return withConnection(
    flags,
    async ({ api }, out) => {
      const limit = flags.limit === undefined ? 50 : Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
        throw new UsageError("--limit must be a whole number from 1 to 100");
      }
      const list = await withRetry(() =>
        api.listSessions({ limit, ...(flags.awaitingMe === true && { awaiting: "me" as const }) }),
      );
      if (flags.awaitingMe === true && list.data.length === 0 && !flags.json) {
        out.say("no session is waiting for your approval");
        return EXIT.ok;
      }
      process.stdout.write(
        flags.json
          ? `${terminalJson(list)}\n`
          : `${sessionTable(list.data, Date.now(), { requester: flags.awaitingMe === true })}\n`,
      );
      return EXIT.ok;
    },
    undefined,
    true,
  );
}

/**
 * `planport stop <id>`: archives the session; the planner stops (an approved plan's execution
 * in the cloud too), the review page closes decisions. A session that has already ended is left
 * as it is: the command says how it ended and exits 3 (sentences.ts).
 */
export function runStop(id: string, flags: ServerFlags): Promise<number> {
  return withConnection(
    flags,
    async ({ api }, out) => {
      refuseStop(await withRetry(() => api.getSession(id)));
      const session = await withRetry(() => api.archive(id));
      out.say(`Session ${terminalLine(session.id)} stopped.`);
      out.result({ event: "stopped", ...session });
      return EXIT.ok;
    },
    id,
  );
}

/**
 * `planport pull <id>`: prints the remote execution's diff; `--check` says whether it would
 * apply cleanly here (exit 0) or what is in the way (exit 1), writing nothing; `--apply`
 * applies it, on a new branch with `--branch NAME`. Only a session approved for the cloud has
 * changes: one that ended another way exits 3, and one whose planner cannot execute exits 2
 * (sentences.ts). With `--json`, one line: `changes` (the diff), `check` or `applied`.
 */
export function runPull(id: string, flags: ServerFlags & PullFlags): Promise<number> {
  const repo = resolve(flags.repo ?? process.cwd());
  let mode: ReturnType<typeof pullMode>;
  try {
    mode = pullMode(flags);
    // Before any network: a bad or taken branch name is known here and now.
    if (flags.branch !== undefined) assertNewBranch(repo, flags.branch);
  } catch (e) {
    return Promise.resolve(commandOutput(flags.json === true).fail(e, { sessionId: id }));
  }
  return withConnection(
    flags,
    async ({ api }, out) => {
      refusePull(await withRetry(() => api.getSession(id)));
      const diff = await withRetry(() => api.changes(id));
      if (mode === "print" || diff === "") {
        if (out.json) out.result({ event: "changes", id, diff });
        // Redirected, the diff is data and stays byte for byte; on a terminal it is for reading.
        else process.stdout.write(process.stdout.isTTY ? terminalText(diff) : diff);
        if (diff === "") {
          out.say(
            `Session ${id} has no changes ${mode === "print" ? "" : `to ${mode} `}yet: the cloud has not written any files (\`planport status ${id}\` shows its phase).`,
          );
        }
        return EXIT.ok;
      }
      if (mode === "check") return checkPull(id, repo, diff, out);
      const { ok, output } = await applyChanges(repo, diff, { branch: flags.branch });
      if (output) out.say(output);
      const onBranch = flags.branch === undefined ? "" : ` on the new branch ${flags.branch}`;
      if (!ok) {
        return out.error(
          "local_failure",
          `git apply --3way could not apply the changes in ${repo}${onBranch}; save them with \`planport pull ${id} > changes.diff\` and merge by hand`,
          id,
        );
      }
      out.say(`applied the changes of ${id} in ${repo}${onBranch}`);
      out.result({
        event: "applied",
        id,
        repo,
        ...(flags.branch === undefined ? {} : { branch: flags.branch }),
      });
      return EXIT.ok;
    },
    id,
  );
}

/** `pull --check`: the report (stdout, or one `check` line); 0 when it would apply cleanly, 1 when not. */
function checkPull(id: string, repo: string, diff: string, out: CommandOutput): number {
  try {
    const check = checkChanges(repo, diff);
    if (out.json) {
      out.result({
        event: "check",
        id,
        repo,
        applies_cleanly: check.appliesCleanly,
        paths: check.paths,
        conflicts: check.conflicts,
        dirty: check.dirty,
        unappliable: check.unappliable,
        problems: check.problems,
        warnings: check.warnings,
      });
    } else process.stdout.write(`${checkText(check, repo, id)}\n`);
    return check.appliesCleanly ? EXIT.ok : EXIT.localFailure;
  } catch (e) {
    // A diff that would be refused does not apply cleanly: that is the answer, not a misuse.
    if (!(e instanceof ApplyRefusedError) || e.reason === "not_a_work_tree") throw e;
    return out.error("local_failure", errorText(e, { sessionId: id }), id);
  }
}
