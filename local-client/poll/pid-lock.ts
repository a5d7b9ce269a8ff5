import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { err, ok, type Result } from "../../src/protocol/index.ts";

/**
 * A lock file holding the pid of its holder. A lock whose process no longer exists (a crash, a
 * SIGKILL, a closed laptop) is stale and taken over, so a lock can never wedge a user forever.
 */

/** The lock taken (`value` releases it), or the pid of the process that holds it. */
export type LockAttempt = Result<() => void, { heldBy: number }>;

/**
 * Tries once to take the lock at `path` for `pid`.
 *
 * @example
 * const lock = tryPidLock("/home/me/.planport/sessions/ses_….lock");
 * if (!lock.ok) throw new Error(`busy: pid ${lock.error.heldBy}`);
 * try { … } finally { lock.value(); }
 */
export function tryPidLock(path: string, pid: number = process.pid): LockAttempt {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Written aside, then hard-linked into place: the link fails if a lock exists, and a lock that
  // exists always holds a complete pid (no half-written file to misread as stale).
  const tmp = `${path}.${pid}.tmp`;
  writeFileSync(tmp, `${pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        linkSync(tmp, path);
        return ok(() => {
          if (readPid(path) === pid) rmSync(path, { force: true });
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = readPid(path);
      if (holder !== null && holder !== pid && isAlive(holder)) return err({ heldBy: holder });
      // Stale (its process is gone, or it is our own leftover): take it over.
      rmSync(path, { force: true });
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  throw new Error(`could not take the lock ${path}; remove it if no planport process is running`);
}

/**
 * Waits (polling) until the lock is free, for work others do briefly (starting the worker).
 */
export async function waitForPidLock(path: string, timeoutMs: number): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lock = tryPidLock(path);
    if (lock.ok) return lock.value;
    if (Date.now() > deadline) {
      throw new Error(
        `process ${lock.error.heldBy} has held ${path} for over ${Math.round(timeoutMs / 1000)}s; ` +
          `if it is stuck, stop it (\`kill ${lock.error.heldBy}\`) and try again`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The pid in a lock file, or null when it is missing or unreadable. */
export function readPid(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** True while a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
