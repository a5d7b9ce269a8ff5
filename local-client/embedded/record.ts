import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { z } from "zod";
import { safeJson } from "../home.ts";
import { isAlive } from "../poll/pid-lock.ts";

/**
 * The record of the running embedded worker (`worker.json`: pid, port, url, persist dir) and
 * the process control around it: is that pid still our worker, and stopping it cleanly.
 */

/** How long a stopping worker gets for a clean shutdown before it is killed. */
const STOP_GRACE_MS = 5_000;

export const RecordSchema = z.object({
  pid: z.number().int().positive(),
  port: z.number().int().positive(),
  url: z.string(),
  persist_dir: z.string(),
  started_at: z.string(),
});
export type EmbeddedRecord = z.infer<typeof RecordSchema>;

/**
 * Stops the recorded worker (SIGTERM to its process group, SIGKILL after a grace period) and
 * removes the record. Resolves true when a running worker was stopped.
 */
export async function stopRecordedWorker(recordPath: string): Promise<boolean> {
  const record = readRecord(recordPath);
  if (!record) return false;
  let stopped = false;
  if (isAlive(record.pid) && isOurWorker(record)) {
    signalGroup(record.pid, "SIGTERM");
    if (!(await exitedWithin(record.pid, STOP_GRACE_MS))) {
      signalGroup(record.pid, "SIGKILL");
      await exitedWithin(record.pid, STOP_GRACE_MS);
    }
    stopped = true;
  } else if (orphanedRuntimes(record.pid).length > 0) {
    // wrangler died and left its runtimes running on the persist dir (and the port): a new
    // worker must not open the same SQLite files beside them.
    signalGroup(record.pid, "SIGKILL");
    stopped = true;
  }
  rmSync(recordPath, { force: true });
  return stopped;
}

/**
 * A recorded pid may have been reused by an unrelated process after a reboot: only a process
 * whose command line is our worker host (or, from older versions, wrangler) on our persist
 * dir is ours to reuse or signal.
 */
export function isOurWorker(record: EmbeddedRecord): boolean {
  try {
    const args = commandLine(record.pid);
    return (
      (args.includes("worker-host") || args.includes("wrangler")) &&
      args.includes(record.persist_dir)
    );
  } catch {
    return false;
  }
}

/**
 * A process's command line: from /proc where there is one (no process to start, which every
 * command using the embedded worker would otherwise pay), else from `ps`.
 */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return execFileSync("ps", ["-o", "args=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  }
}

/**
 * Pids of workerd runtimes still in the process group that wrangler `groupId` led: what a
 * crash of wrangler alone leaves behind. Only processes running the workerd binary count, so a
 * reused pid never makes an unrelated group a target.
 *
 * @example orphanedRuntimes(record.pid) // [] once the whole worker is gone
 */
export function orphanedRuntimes(groupId: number): number[] {
  let listing: string;
  try {
    listing = execFileSync("ps", ["-A", "-o", "pid=,pgid=,args="], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const line of listing.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (match === null || Number(match[2]) !== groupId) continue;
    if (/[/\\]workerd(\s|$)/.test(match[3] ?? "")) pids.push(Number(match[1]));
  }
  return pids;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

async function exitedWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

export function readRecord(path: string): EmbeddedRecord | null {
  try {
    const parsed = RecordSchema.safeParse(safeJson(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
