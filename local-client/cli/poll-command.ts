import { keepPlanningCount, type Session } from "../../src/protocol/index.ts";
import { abortAfter } from "../http/abort-after.ts";
import { createApi, withRetry } from "../http/api.ts";
import { PollError, type PollProgress, pollTimeoutError } from "../poll/error.ts";
import { POLL_TIMEOUT_MS, pollForApprovedExitPlanMode, systemClock } from "../poll/poller.ts";
import { ExitPlanModeScanner } from "../poll/scanner.ts";
import {
  acquirePollLock,
  assertSessionId,
  loadSidecar,
  RESUMABLE,
  removeSidecar,
  saveSidecar,
} from "../poll/sidecar.ts";
import type { SnapshotProgress } from "../snapshot/build.ts";
import { repositoryPlace, taskWithArea } from "../snapshot/repository-place.ts";
import type { SentSnapshot } from "../snapshot/send.ts";
import { collectRepository, uploadRepository } from "../snapshot/upload.ts";
import { terminalText } from "../terminal/text.ts";
import { errorText, pollErrorText } from "./advice.ts";
import {
  assertServerAnswers,
  type Connection,
  connect,
  type KeptRunning,
  keptRunningText,
  type ServerSource,
  serverFor,
} from "./connection.ts";
import { EXIT, exitCodeForError, exitCodeForReason, reasonForExitCode } from "./exit-codes.ts";
import {
  approversFlag,
  type PlanFlags,
  type PollFlags,
  planTask,
  pollSettings,
  readSeedPlan,
  type Settings,
  sessionPlanners,
  variantFlag,
} from "./flags.ts";
import { runGroup } from "./group-command.ts";
import { handOff } from "./handoff.ts";
import { createReporter, type Reporter } from "./reporter.ts";
import { refuseWait } from "./sentences.ts";

/** `planport plan` and `planport attach`: create or find a session, poll it, hand the plan off. */

export type { PlanFlags, PollFlags };

/**
 * Ctrl-C once: stop polling gracefully (exit 130). Twice: leave at once, first saying what is
 * left running (`leaving`, when given).
 */
function interruptOnSigint(leaving?: () => string): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) {
      if (leaving) process.stderr.write(`\nplanport: ${terminalText(leaving())}\n`);
      process.exit(EXIT.interrupted);
    }
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  return { signal: controller.signal, dispose: () => process.off("SIGINT", onSigint) };
}

/**
 * `planport plan [task…]`: snapshot, upload if new, create the session (or, with `--attempts` /
 * `--planners`, a best-of-N group of them: group-command.ts, each with the same draft), poll,
 * hand off. `--seed-plan FILE` (`-`: stdin) sends a draft to refine as `seed_plan`; the task
 * may then be left out.
 */
export async function runPlan(taskWords: string[], flags: PlanFlags): Promise<number> {
  const reporter = createReporter({ json: flags.json === true, quiet: flags.quiet === true });
  // How far it got, for what a Ctrl-C leaves behind: nothing before the session is created.
  let stage: StartStage = { kind: "starting" };
  let conn: Connection | null = null;
  const interrupt = interruptOnSigint(() => leavingText(stage, conn));
  let connecting: Promise<Connection> | null = null;
  // Where the server came from, for a failure before the connection is made.
  let source: ServerSource | undefined;
  try {
    const seedPlan = await readSeedPlan(flags.seedPlan);
    const given = pollSettings(flags);
    // From a subfolder: the whole repository is snapshotted, the subfolder is the area.
    const place = await repositoryPlace(given.repoRoot);
    const settings = { ...given, repoRoot: place.root };
    const task = taskWithArea(planTask(taskWords, seedPlan), place.area);
    const planners = sessionPlanners(flags);
    const variant = variantFlag(flags.variant);
    const approvers = approversFlag(flags.approvers);
    // The embedded worker (if needed) starts while the snapshot is being built; a server the
    // user named is asked first, so nothing is collected for a server that is not there.
    connecting = connect(flags, { ...reporter, signal: interrupt.signal }).then(async (c) => {
      try {
        await assertServerAnswers(c, interrupt.signal);
        return c;
      } catch (err) {
        await c.release();
        throw err;
      }
    });
    connecting.catch(() => {});
    const target = serverFor(flags);
    source = target.kind === "remote" ? target.source : "embedded";
    if (target.kind === "remote") conn = await connecting;
    // A line, not the spinner's text: it stays on screen (the README's transcript).
    reporter.note(
      `snapshotting ${settings.repoRoot}${place.area === null ? "" : ` (area: ${place.area})`}…`,
    );
    const onProgress = ({ phase, done, total }: SnapshotProgress) =>
      reporter.status(`snapshot: ${phase} ${done}/${total} files`);
    const tree = await collectRepository(settings.repoRoot, {
      onProgress,
      signal: interrupt.signal,
    });
    conn = await connecting;
    const api = conn.api;
    interrupt.signal.throwIfAborted();
    const snapshot = await uploadRepository(api, conn, tree, {
      onProgress,
      signal: interrupt.signal,
    });
    // The counters are done: the spinner goes, the snapshot's line stays.
    reporter.pause();
    reporter.note(snapshotNote(snapshot));
    const empty = emptySnapshotWarning(snapshot, settings.repoRoot);
    if (empty !== null) reporter.warn(empty);
    const request = {
      prompt: task,
      snapshot_id: snapshot.id,
      variant,
      ...(seedPlan !== undefined && { seed_plan: seedPlan }),
      ...(approvers !== undefined && { approvers }),
    };
    interrupt.signal.throwIfAborted();
    stage = { kind: "creating" };
    if (planners.length > 1) {
      return await runGroup(conn, { request, planners }, settings, reporter, interrupt.signal);
    }
    // Not retried: creating twice would start two sessions. Not cut short by Ctrl-C either:
    // a request cut mid-way may still have created it, and then no one could say which it is.
    const session = await createApi({ server: conn.server, token: conn.token }).createSession({
      ...request,
      planner: planners[0],
    });
    stage = { kind: "created", sessionId: session.id };
    reporter.session(session.id, session.review_url);
    const release = acquirePollLock(session.id);
    try {
      return await pollSession(conn, session, settings, reporter, interrupt.signal, {
        resume: null,
        startedAt: undefined,
        created: true,
      });
    } finally {
      release();
    }
  } catch (err) {
    // A failure while the worker was still being started: it is released all the same.
    conn ??= (await connecting?.catch(() => null)) ?? null;
    if (interrupt.signal.aborted && stage.kind === "starting") {
      const kept = await conn?.release({ quiet: true }).catch(() => null);
      conn = null;
      return interruptedBeforeSession(reporter, kept ?? null);
    }
    if (interrupt.signal.aborted)
      return interruptedEarly(reporter, stage.kind === "created" ? stage.sessionId : null);
    return failEarly(reporter, err, null, conn?.source ?? source);
  } finally {
    interrupt.dispose();
    reporter.pause();
    await conn?.release().catch(() => {});
  }
}

/** How far `plan` got before the session: what a Ctrl-C leaves behind depends on it. */
type StartStage =
  | { kind: "starting" }
  | { kind: "creating" }
  | { kind: "created"; sessionId: string };

/** What a second Ctrl-C (leaving at once) leaves running. */
function leavingText(stage: StartStage, conn: Connection | null): string {
  switch (stage.kind) {
    case "starting":
      // A worker still starting is stopped as this process exits (worker-process.ts).
      return conn?.source === "embedded"
        ? "interrupted before a session was started; the local planport worker may keep running: `planport embedded --stop` stops it."
        : "interrupted before a session was started: nothing is left running.";
    case "creating":
      return "interrupted while the session was being created: it may exist; `planport list` shows it and `planport attach <id>` picks it up.";
    case "created":
      return `interrupted; session ${stage.sessionId} keeps running: \`planport attach ${stage.sessionId}\` picks it up.`;
  }
}

/** Ctrl-C before any session existed: says what is left running (issue 26), exit 130. */
function interruptedBeforeSession(reporter: Reporter, kept: KeptRunning | null): number {
  reporter.error({
    reason: "stopped",
    message:
      kept === null
        ? "interrupted before a session was started: nothing is left running."
        : `interrupted before a session was started. ${keptRunningText(kept)}`,
    sessionId: null,
    rejectCount: 0,
  });
  return EXIT.interrupted;
}

/** `planport attach <id>`: resumes polling where it stopped (Ctrl-C, lost network, timeout). */
export async function runAttach(sessionId: string, flags: PollFlags): Promise<number> {
  const reporter = createReporter({ json: flags.json === true, quiet: flags.quiet === true });
  const interrupt = interruptOnSigint();
  let conn: Connection | null = null;
  let release = () => {};
  try {
    assertSessionId(sessionId);
    // Before anything else: a second poll of the same session is refused at once.
    release = acquirePollLock(sessionId);
    const sidecar = loadSidecar(sessionId);
    const settings = pollSettings(flags, sidecar?.repo);
    conn = await connect(flags, { ...reporter, signal: interrupt.signal });
    const api = conn.api;
    const resume = sidecar ? { cursor: sidecar.cursor, scanner: sidecar.scanner } : null;
    // --timeout counts from here: reading the session is part of the wait, not extra to it.
    const startedAt = systemClock.now();
    const timeoutMs = settings.timeoutMs ?? POLL_TIMEOUT_MS;
    const deadline = abortAfter(timeoutMs, [interrupt.signal]);
    let session: Session;
    try {
      session = await withRetry(
        () => api.getSession(sessionId, { signal: deadline.signal }),
        deadline.signal,
      );
    } catch (err) {
      if (!deadline.timedOut()) throw err;
      const fresh = { cursor: null, scanner: new ExitPlanModeScanner().state() };
      throw pollTimeoutError(sessionId, timeoutMs, resume ?? fresh);
    } finally {
      deadline.clear();
    }
    reporter.session(session.id, session.review_url);
    // Ended without a plan (stopped, superseded, failed): nothing will come; said at once.
    try {
      refuseWait(session);
    } catch (err) {
      removeSidecar(sessionId);
      throw err;
    }
    if (sidecar && sidecar.scanner.rejectCount > 0) {
      reporter.note(`resuming (${keepPlanningCount(sidecar.scanner.rejectCount)} so far)`);
    }
    return await pollSession(conn, session, settings, reporter, interrupt.signal, {
      resume,
      startedAt,
    });
  } catch (err) {
    if (interrupt.signal.aborted) return interruptedEarly(reporter, sessionId);
    if (err instanceof PollError) return reportPollError(reporter, err);
    return failEarly(reporter, err, sessionId, conn?.source);
  } finally {
    release();
    interrupt.dispose();
    reporter.pause();
    await conn?.release().catch(() => {});
  }
}

async function pollSession(
  conn: Connection,
  session: Session,
  settings: Settings,
  reporter: Reporter,
  signal: AbortSignal,
  from: { resume: PollProgress | null; startedAt: number | undefined; created?: boolean },
): Promise<number> {
  const save = (progress: PollProgress) =>
    saveSidecar({
      sessionId: session.id,
      server: conn.server,
      reviewUrl: session.review_url,
      repo: settings.repoRoot,
      progress,
    });
  try {
    const outcome = await pollForApprovedExitPlanMode({
      server: conn.server,
      token: conn.token,
      sessionId: session.id,
      timeoutMs: settings.timeoutMs,
      intervalMs: settings.intervalMs,
      signal,
      resume: from.resume ?? undefined,
      startedAt: from.startedAt,
      created: from.created === true,
      onPhaseChange: (phase) => reporter.phase(phase, session.review_url),
      onRejected: (n) => reporter.rejected(n),
      onRecovered: () => reporter.recovered(),
      onTransientFailure: (n, err) =>
        reporter.status(`cannot reach the server (${n} in a row): ${err.message}`),
    });
    removeSidecar(session.id);
    return await handOff(session, outcome, settings, reporter);
  } catch (err) {
    if (!(err instanceof PollError)) throw err;
    if (RESUMABLE.has(err.reason)) save(err.progress);
    else removeSidecar(session.id);
    return reportPollError(reporter, err);
  }
}

/** The error line of a poll that ended without a plan, with the advice; returns the exit code. */
function reportPollError(reporter: Reporter, err: PollError): number {
  reporter.error({
    reason: err.reason,
    message: pollErrorText(err),
    sessionId: err.sessionId,
    rejectCount: err.rejectCount,
  });
  return exitCodeForReason(err.reason);
}

function interruptedEarly(reporter: Reporter, sessionId: string | null): number {
  reporter.error({
    reason: "stopped",
    message:
      sessionId === null
        ? "Interrupted before polling started. If the session was already created, `planport list` shows it and `planport attach <id>` picks it up."
        : `Interrupted before polling started; session ${sessionId} keeps running: \`planport attach ${sessionId}\` picks it up.`,
    sessionId,
    rejectCount: 0,
  });
  return EXIT.interrupted;
}

function failEarly(
  reporter: Reporter,
  err: unknown,
  sessionId: string | null,
  source: ServerSource | undefined,
): number {
  const code = exitCodeForError(err);
  reporter.error({
    reason: reasonForExitCode(code),
    message: errorText(err, { source, sessionId: sessionId ?? undefined }),
    sessionId,
    rejectCount: 0,
  });
  return code;
}

/**
 * What the snapshot cost, for the terminal: files, skips, and what was sent.
 *
 * @example snapshotNote(sent) // "snapshot: 10,000 files; sent 1 new file (2.1 KiB)"
 */
export function snapshotNote(sent: SentSnapshot): string {
  const files = `snapshot: ${sent.files.toLocaleString("en-US")} files`;
  const skipped =
    sent.skipped.length > 0
      ? `, ${sent.skipped.length.toLocaleString("en-US")} skipped (binary, too large or unreadable)`
      : "";
  const cost = sent.reused
    ? "unchanged, nothing sent"
    : sent.blobsSent === 0
      ? `every file already on the server; sent the file list (${formatBytes(sent.sentBytes)})`
      : `sent ${sent.blobsSent.toLocaleString("en-US")} new or changed ${sent.blobsSent === 1 ? "file" : "files"} (${formatBytes(sent.sentBytes)})`;
  return `${files}${skipped}; ${cost}`;
}

/**
 * Said when the snapshot holds no file: the planner would plan against nothing, which is right
 * for a project started from scratch and a surprise in the wrong folder.
 *
 * @example emptySnapshotWarning({ files: 0, skipped: [] }, "/tmp/x")
 * // → "/tmp/x holds no file to plan against: the planner sees an empty repository. …"
 */
export function emptySnapshotWarning(
  sent: Pick<SentSnapshot, "files" | "skipped">,
  repoRoot: string,
): string | null {
  if (sent.files > 0) return null;
  const skipped =
    sent.skipped.length > 0
      ? ` (${sent.skipped.length.toLocaleString("en-US")} skipped: binary, too large or unreadable)`
      : "";
  return `${repoRoot} holds no file to plan against${skipped}: the planner sees an empty repository. Planning a new project is fine; otherwise run planport in your project's folder or pass --repo DIR.`;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
