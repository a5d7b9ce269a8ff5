import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

/**
 * The workerd processes of a `wrangler dev` run as /proc shows them: which ones belong to its
 * process group, their CPU time and resident memory. Used by the fault tests (memory bounds
 * under hostile uploads) and the benchmarks (the offline planner's CPU and memory). Linux only.
 */

const MIB = 1024 * 1024;
const CLOCK_TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));

/** One workerd process of a `wrangler dev` process group. */
export interface WorkerdProcess {
  pid: number;
  /** True for the runtime that hosts the planport worker and its Durable Objects. */
  hostsWorker: boolean;
}

/**
 * The workerd processes in wrangler's process group. wrangler 4 runs two: a proxy runtime that
 * owns the public port and forwards to the runtime hosting the user worker, which is the one
 * started with an inspector address.
 *
 * @example
 * const host = workerdProcesses(worker.pid).find((p) => p.hostsWorker);
 */
export function workerdProcesses(processGroup: number): WorkerdProcess[] {
  const found: WorkerdProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== processGroup || !stat.includes("(workerd)")) continue;
      // A zombie has exited already (it holds no port, no file, no memory): not a process here.
      if (fields[0] === "Z") continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      found.push({
        pid: Number(entry),
        hostsWorker: cmdline.some((arg) => arg.startsWith("--inspector-addr")),
      });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * CPU time (user + system) a process has used so far, in ms (clock-tick resolution, 10 ms).
 *
 * @example
 * const before = cpuMs(pid); … ; console.log(cpuMs(pid) - before);
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the name: state is field 3, utime field 14, stime field 15 (1-based, man 5 proc).
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}

/**
 * Resident memory of a process in MiB: now (VmRSS) and the peak since the last
 * {@link resetPeakRss} or the process start (VmHWM).
 */
export function rssMiB(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return { now: (kb("VmRSS") * 1024) / MIB, peak: (kb("VmHWM") * 1024) / MIB };
}

/** Resets the process's peak resident set size to its current size (Linux ≥ 4.0). */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}
