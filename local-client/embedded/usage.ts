import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createApi } from "../http/api.ts";
import { isAlive } from "../poll/pid-lock.ts";

/**
 * What keeps the embedded worker needed: a planport command using it (registered as a file
 * named by its pid in `embedded/users/`), or a session in it still open (not archived, not
 * done). The last command to leave stops it when neither is left (worker.ts), and the worker's
 * host stops it when it has been so for a while (worker-host.ts): sessions nobody waits for and
 * nobody reviews expire (PLANPORT_IDLE_DAYS), and then the worker goes too.
 */

/**
 * Pids of the live commands registered in `dir`, other than `exceptPid`; files of dead ones
 * are removed.
 *
 * @example
 * liveUsers("~/.local/share/planport/embedded/users", process.pid) // → [4242]
 */
export function liveUsers(dir: string, exceptPid?: number): number[] {
  const pids: number[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === exceptPid) continue;
    if (isAlive(pid)) pids.push(pid);
    else rmSync(join(dir, name), { force: true });
  }
  return pids;
}

/** At most this many pages of 100 sessions are read when looking for open ones. */
const MAX_PAGES = 100;

/**
 * Ids of sessions still open in the worker at `url` for `token`; null when that cannot be known
 * (the worker is then kept running).
 *
 * @example
 * await openSessions("http://127.0.0.1:8787", token) // → ["ses_…"]
 */
export async function openSessions(url: string, token: string): Promise<string[] | null> {
  const api = createApi({ server: url, token });
  const open: string[] = [];
  let before: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const list = await api.listSessions({ limit: 100, before });
      for (const s of list.data) if (s.status !== "archived" && s.phase !== "done") open.push(s.id);
      const last = list.data.at(-1);
      if (!list.has_more || last === undefined) return open;
      before = last.id;
    }
    return open;
  } catch {
    return null;
  }
}
