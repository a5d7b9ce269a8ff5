import { setTimeout as delay } from "node:timers/promises";
import type { Session } from "../../src/protocol/index.ts";
import { parseDuration } from "../duration.ts";
import { ApiError, isTransient } from "../http/api.ts";
import { MAX_CONSECUTIVE_FAILURES, POLL_INTERVAL_MS } from "../poll/poller.ts";
import {
  afterFailure,
  changeLine,
  eraseLines,
  fitToScreen,
  type PhaseChange,
  phaseChanges,
  type SeenPhases,
  WATCH_HEADER,
  watchRows,
} from "../poll/watch.ts";
import { terminalJson, terminalLine, terminalText } from "../terminal/text.ts";
import { type Connection, connect } from "./connection.ts";
import { EXIT } from "./exit-codes.ts";
import { commandOutput } from "./output.ts";
import { alignColumns } from "./table.ts";

/**
 * `planport watch [--json]`: the owner's sessions, refreshed every 3 s with one list request per
 * tick (`GET /v1/sessions`, whose answer carries every field the table shows). On a terminal
 * the table is redrawn in place with each phase change printed above it; without one, one
 * line per change; `--json`, one `{"event":"phase","id","phase","outcome"}` line per change
 * (`outcome` the Session's, null while there is none) and nothing else on stdout but an error
 * line. The first tick reports every listed session's phase (a change from nothing).
 * Ctrl-C exits 130. The pure parts are in ../poll/watch.ts.
 */

export interface WatchFlags {
  server?: string;
  token?: string;
  json?: boolean;
  interval?: string;
}

/** One list request per tick reads the newest this many sessions (the API's largest page). */
export const WATCH_LIST_LIMIT = 100;

interface WatchStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream;
}

/**
 * @example
 * process.exitCode = await runWatch({ json: true }); // 130 after Ctrl-C
 */
export async function runWatch(
  flags: WatchFlags,
  streams: WatchStreams = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const { stdout, stderr } = streams;
  const warn = (m: string) => stderr.write(`planport: ${terminalText(m)}\n`);
  const out = commandOutput(flags.json === true, streams);
  let intervalMs = POLL_INTERVAL_MS;
  try {
    if (flags.interval !== undefined) intervalMs = parseDuration(flags.interval);
  } catch (err) {
    return out.error("usage", `--interval: ${(err as Error).message}`);
  }
  const mode = flags.json ? "json" : stdout.isTTY === true ? "tty" : "plain";
  const controller = new AbortController();
  const onSigint = () => {
    // A second Ctrl-C leaves at once (a request may be slow to give up).
    if (controller.signal.aborted) process.exit(EXIT.interrupted);
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  // The reader went away (`planport watch --json | head -3`): stop watching, quietly.
  let readerGone = false;
  const onStdoutError = () => {
    readerGone = true;
    controller.abort();
  };
  stdout.on("error", onStdoutError);
  const signal = controller.signal;
  let conn: Connection | null = null;
  let tableHeight = 0;
  // The last table drawn: a failed refresh redraws it with the failure in its footer.
  let lastTable: string[] = [];
  try {
    // Read-only: it never starts the embedded worker.
    conn = await connect(flags, { note: warn, status: warn, signal }, process.env, {
      start: false,
    });
    const api = conn.api;
    let seen: SeenPhases = new Map();
    let failures = 0;
    while (!signal.aborted) {
      let waitMs = intervalMs;
      let footer = `every ${describeInterval(intervalMs)} · Ctrl-C to stop`;
      let sessions: readonly Session[] | null = null;
      try {
        sessions = (await api.listSessions({ limit: WATCH_LIST_LIMIT }, { signal })).data;
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        const next = afterFailure(
          failures,
          { transient: isTransient(err), retryAfterMs: (err as ApiError).retryAfterMs },
          intervalMs,
          MAX_CONSECUTIVE_FAILURES,
        );
        if (next.kind === "give_up") throw gaveUp(err, next.failures, api.server);
        failures = next.failures;
        waitMs = next.waitMs;
        // The message may quote the server: one terminal-safe line.
        footer = terminalLine(
          `cannot reach the server (${failures} in a row): ${(err as Error).message}`,
        );
        if (mode !== "tty") warn(footer);
      }
      if (sessions !== null) {
        const tick = phaseChanges(seen, sessions);
        seen = tick.seen;
        const byId = new Map(sessions.map((s) => [s.id, s]));
        if (mode === "json") {
          for (const c of tick.changes) {
            stdout.write(`${terminalJson(jsonLine(c, byId.get(c.id)))}\n`);
          }
        } else if (mode === "plain") {
          for (const c of tick.changes) stdout.write(`${changeLine(c, byId.get(c.id))}\n`);
        }
        if (mode === "tty") {
          const lines = tick.changes.map((c) => changeLine(c, byId.get(c.id)));
          tableHeight = redraw(stdout, tableHeight, lines, table(sessions, footer));
        }
      } else if (mode === "tty") {
        tableHeight = redraw(stdout, tableHeight, [], [...lastTable.slice(0, -1), footer]);
      }
      await delay(waitMs, undefined, { signal }).catch(() => {});
    }
    return readerGone ? EXIT.ok : EXIT.interrupted;
  } catch (err) {
    if (signal.aborted) return readerGone ? EXIT.ok : EXIT.interrupted;
    if (err instanceof WatchGaveUp) return out.error("network_or_unknown", err.message);
    return out.fail(err, { source: conn?.source });
  } finally {
    process.off("SIGINT", onSigint);
    stdout.off("error", onStdoutError);
    await conn?.release().catch(() => {});
  }

  function table(sessions: readonly Session[], footer: string): string[] {
    const body =
      sessions.length === 0
        ? ["No sessions yet. Start one with: planport plan <task…>"]
        : alignColumns(WATCH_HEADER, watchRows(sessions, Date.now()));
    lastTable = [...body, footer];
    return lastTable;
  }
}

/** Erases the last table, prints the change lines for good, draws the new table; its height. */
function redraw(
  out: WatchStreams["stdout"],
  height: number,
  changes: readonly string[],
  lines: readonly string[],
): number {
  const screen = { columns: out.columns || 80, rows: out.rows || 24 };
  const shown = fitToScreen(lines, screen);
  const kept = changes.map((l) => `${l}\n`).join("");
  out.write(`${eraseLines(height)}${kept}${shown.join("\n")}\n`);
  return shown.length;
}

/** A change as its `--json` line, with the session's `outcome` as the API gives it (or null). */
function jsonLine(
  c: PhaseChange,
  session: Session | undefined,
): PhaseChange & Pick<Session, "outcome"> {
  return { event: "phase", id: c.id, phase: c.phase, outcome: session?.outcome ?? null };
}

function describeInterval(ms: number): string {
  return ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;
}

/** Transient failures in a row reached the limit (exit 6), or one that will not go away. */
class WatchGaveUp extends Error {
  constructor(message: string, options: { cause?: unknown }) {
    super(message, options);
    this.name = "WatchGaveUp";
  }
}

function gaveUp(err: unknown, failures: number, server: string): Error {
  if (!isTransient(err)) return err instanceof Error ? err : new Error(String(err));
  const last = err instanceof ApiError ? err.message : String(err);
  return new WatchGaveUp(
    `Lost contact with ${server} after ${failures} failed refreshes in a row (last: ${last}). Run \`planport watch\` again when it is back.`,
    { cause: err },
  );
}
