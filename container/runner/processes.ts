import { readdir, readFile } from "node:fs/promises";
import { COMMAND_UID } from "./layout.ts";

/**
 * Ends every process of the commands' user. A command's process group is killed at its
 * timeout, but a process that started a session of its own (setsid, a daemon) left the group;
 * no process of a command outlives it, so nothing a command started keeps running, holds its
 * output open or touches the tree between runs.
 */
export async function endCommandProcesses(uid = COMMAND_UID): Promise<void> {
  // A process may fork while we kill; a few passes end a busy family (PidsLimit bounds it).
  for (let pass = 0; pass < 20; pass++) {
    const pids = await processesOf(uid);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The ids of the live (not zombie) processes whose real uid is `uid`, from /proc. */
export async function processesOf(uid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    const uidLine = /^Uid:\s+(\d+)/m.exec(status);
    const state = /^State:\s+(\w)/m.exec(status);
    if (uidLine?.[1] === String(uid) && state?.[1] !== "Z") pids.push(Number(name));
  }
  return pids;
}
