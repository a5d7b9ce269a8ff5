import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";

/**
 * What the system says about a process: who owns it, when it started, its command line. The
 * embedded worker's record (record.ts) is checked against these before planport reuses or
 * signals a recorded pid: after a crash or a reboot that pid may belong to anything.
 */
export interface ProcessFacts {
  pid: number;
  uid: number;
  /** When it started, in ms since the epoch (to the second, or better where /proc says). */
  startedAtMs: number;
  /** Its arguments, joined by spaces. */
  args: string;
}

/**
 * The facts of a live process, or null when there is no such process (or they cannot be read).
 * From /proc where there is one (no process to start: every command using the embedded worker
 * asks), else from `ps`.
 *
 * @example
 * processFacts(process.pid)?.uid // → process.getuid()
 */
export function processFacts(pid: number): ProcessFacts | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (hasProc === undefined) hasProc = existsSync("/proc/self/stat");
  if (!hasProc) return fromPs(pid);
  try {
    return fromProc(pid);
  } catch {
    return fromPs(pid);
  }
}

let hasProc: boolean | undefined;

function fromProc(pid: number): ProcessFacts | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its
  // last ")". The state is field 3 (a zombie has exited: only its exit status is left), the
  // start time field 22, in clock ticks since boot.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z") return null;
  const ticks = Number(fields[19]);
  if (!Number.isFinite(ticks)) throw new Error(`unreadable /proc/${pid}/stat`);
  return {
    pid,
    uid: statSync(`/proc/${pid}`).uid,
    startedAtMs: bootTimeMs() + (ticks * 1000) / CLOCK_TICKS_PER_S,
    args: readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim(),
  };
}

/** Linux reports process start times in USER_HZ, which is 100 on every architecture it runs on. */
const CLOCK_TICKS_PER_S = 100;

let bootTime: number | undefined;
function bootTimeMs(): number {
  if (bootTime === undefined) {
    const match = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
    if (match === null) throw new Error("no btime in /proc/stat");
    bootTime = Number(match[1]) * 1000;
  }
  return bootTime;
}

function fromPs(pid: number): ProcessFacts | null {
  let line: string;
  try {
    line = execFileSync("ps", ["-o", "uid=,lstart=,args=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, LC_ALL: "C", TZ: process.env.TZ ?? "" },
    }).trim();
  } catch {
    return null;
  }
  // "  501 Sun Dec  6 16:51:50 2026 /usr/bin/node …": lstart is always 24 characters.
  const match = /^(\d+)\s+(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4})\s+(.*)$/.exec(line);
  if (match === null) return null;
  const startedAtMs = Date.parse(match[2] as string);
  if (Number.isNaN(startedAtMs)) return null;
  return { pid, uid: Number(match[1]), startedAtMs, args: match[3] as string };
}

/**
 * This process's user id (`process.getuid`), or null where there is none (Windows).
 *
 * @example
 * ownUid() // → 1000
 */
export function ownUid(): number | null {
  return typeof process.getuid === "function" ? process.getuid() : null;
}
