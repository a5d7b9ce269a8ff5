import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { z } from "zod";
import { safeJson } from "../home.ts";
import { ownUid, type ProcessFacts, processFacts } from "./process-facts.ts";

/**
 * The record of the running embedded worker (`worker.json`: pid, port, url, state folder, when
 * it started) and the process control around it: is that pid still our worker, and stopping it
 * cleanly.
 *
 * A recorded pid proves nothing by itself: after a crash or a reboot it may lead another
 * process (another project's `wrangler dev`, another user's program). planport reuses or
 * signals a process only when the system's facts match the record ({@link isRecordedProcess}):
 * it belongs to this user, it started while the recorded worker was starting, and its command
 * line is the worker host's on this state folder.
 */

/** How long a stopping worker gets for a clean shutdown before it is killed. */
const STOP_GRACE_MS = 5_000;
/**
 * Clock slack for "started while the worker was starting": `ps` tells start times to the
 * second, truncated, and a record's times come from another clock read.
 */
const START_SLACK_MS = 2_000;
/** A record without `launched_at` (an older planport): how long before `started_at` it began. */
const LEGACY_START_WINDOW_MS = 120_000;

export const RecordSchema = z.object({
  /** The worker host: the leader of the worker's process group. */
  pid: z.number().int().positive(),
  port: z.number().int().positive(),
  url: z.string(),
  persist_dir: z.string(),
  /** When the host was about to be started. */
  launched_at: z.string().optional(),
  /** When it answered ready: every process of the worker started between the two. */
  started_at: z.string(),
  /** The Workers runtime the host runs (workerd). */
  runtime_pid: z.number().int().positive().optional(),
});
export type EmbeddedRecord = z.infer<typeof RecordSchema>;

/**
 * Whether a process is one the record names: owned by this user, started between the record's
 * launch and its readiness, and (for the host) running the worker host on the record's state
 * folder or (for the runtime) workerd. Pure.
 *
 * @example
 * isRecordedProcess(record, processFacts(record.pid), ownUid(), "host") // → false for a reused pid
 */
export function isRecordedProcess(
  record: EmbeddedRecord,
  facts: ProcessFacts | null,
  uid: number | null,
  role: "host" | "runtime",
): boolean {
  if (facts === null) return false;
  if (uid !== null && facts.uid !== uid) return false;
  const started = Date.parse(record.started_at);
  const launched =
    record.launched_at === undefined
      ? started - LEGACY_START_WINDOW_MS
      : Date.parse(record.launched_at);
  if (Number.isNaN(started) || Number.isNaN(launched)) return false;
  if (facts.startedAtMs < launched - START_SLACK_MS || facts.startedAtMs > started + START_SLACK_MS)
    return false;
  if (role === "runtime") return /[/\\]workerd(\s|$)/.test(facts.args);
  return (
    (facts.args.includes("worker-host") || facts.args.includes("wrangler")) &&
    facts.args.includes(record.persist_dir)
  );
}

/**
 * Whether the recorded worker host is alive and is the one recorded.
 *
 * @example
 * isOurWorker(readRecord(path)) // → false after a reboot gave its pid to another process
 */
export function isOurWorker(record: EmbeddedRecord): boolean {
  return isRecordedProcess(record, processFacts(record.pid), ownUid(), "host");
}

/**
 * Stops the recorded worker (SIGTERM to its process group, SIGKILL after a grace period) and
 * removes the record. Resolves true when a running worker was stopped. A process the record
 * names that is not the recorded worker is left alone.
 */
export async function stopRecordedWorker(recordPath: string): Promise<boolean> {
  const record = readRecord(recordPath);
  if (!record) return false;
  let stopped = false;
  if (isOurWorker(record)) {
    signal(-record.pid, "SIGTERM");
    if (!(await exitedWithin(record.pid, STOP_GRACE_MS))) {
      signal(-record.pid, "SIGKILL");
      await exitedWithin(record.pid, STOP_GRACE_MS);
    }
    stopped = true;
  }
  // The host gone (killed, or stopped just now), its runtime perhaps not: a runtime left on the
  // state folder (and the port) must go before a new worker opens the same SQLite files. So must
  // wrangler's own Node process when only its launcher (the group's leader) was killed.
  for (const pid of [...orphanedRuntimes(record), ...orphanedHosts(record)]) {
    signal(pid, "SIGKILL");
    stopped = true;
  }
  rmSync(recordPath, { force: true });
  return stopped;
}

/**
 * Pids of the recorded worker's runtimes (workerd) still alive: the recorded one, and any other
 * in the host's process group, each checked against the record (owner, start time, program).
 *
 * @example orphanedRuntimes(record) // [] once the whole worker is gone
 */
export function orphanedRuntimes(record: EmbeddedRecord): number[] {
  const candidates = new Set<number>(groupMembers(record.pid));
  if (record.runtime_pid !== undefined) candidates.add(record.runtime_pid);
  const uid = ownUid();
  return [...candidates].filter((pid) =>
    isRecordedProcess(record, processFacts(pid), uid, "runtime"),
  );
}

/**
 * Pids of the recorded worker's host processes other than the recorded one, still alive in its
 * process group: `wrangler dev`'s Node process outlives its launcher (`bin/wrangler.js`, the
 * recorded pid) when only the launcher is killed. Each is checked against the record (owner,
 * start time, program and state folder).
 */
function orphanedHosts(record: EmbeddedRecord): number[] {
  const uid = ownUid();
  return groupMembers(record.pid).filter(
    (pid) => pid !== record.pid && isRecordedProcess(record, processFacts(pid), uid, "host"),
  );
}

/** Pids in the process group `groupId` (a group outlives its leader while members live). */
function groupMembers(groupId: number): number[] {
  let listing: string;
  try {
    listing = execFileSync("ps", ["-A", "-o", "pid=,pgid="], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const line of listing.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s*$/.exec(line);
    if (match !== null && Number(match[2]) === groupId) pids.push(Number(match[1]));
  }
  return pids;
}

function signal(target: number, name: NodeJS.Signals): void {
  try {
    process.kill(target, name);
  } catch {
    // Already gone.
  }
}

async function exitedWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (processFacts(pid) === null) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return processFacts(pid) === null;
}

export function readRecord(path: string): EmbeddedRecord | null {
  try {
    const parsed = RecordSchema.safeParse(safeJson(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
