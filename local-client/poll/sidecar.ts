import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { SESSION_ID_PATTERN } from "../../src/protocol/index.ts";
import { PollLockedError, UsageError } from "../errors.ts";
import { planportHome, safeJson, writePrivateFile } from "../home.ts";
import type { PollErrorReason, PollProgress } from "./error.ts";
import { tryPidLock } from "./pid-lock.ts";

export { PollLockedError };

/**
 * What a poll leaves behind on this machine, in `~/.planport/sessions/`:
 * - `<id>.json`, the sidecar: cursor and scanner state, so `attach` resumes where Ctrl-C (or a
 *   lost network) stopped it without recounting rejections;
 * - `<id>.lock`, the pid of the process polling it now, so a second poll is refused.
 */

const SidecarSchema = z.object({
  session_id: z.string(),
  /**
   * `server` and `review_url` are what the poll ran with, a note for a person reading the file.
   * Nothing reads them back: a resumed poll connects anew and prints the link of a fresh answer,
   * which the server builds per request, so a worker that came back on another port is found
   * (docs/DESIGN.md "Review links").
   */
  server: z.string(),
  review_url: z.string().optional(),
  repo: z.string().optional(),
  cursor: z.string().nullable(),
  scanner: z.object({
    rejectCount: z.number().int().nonnegative(),
    openPlanCalls: z.array(z.string()),
    everSeenPending: z.boolean(),
  }),
  saved_at: z.string(),
});
export type Sidecar = z.infer<typeof SidecarSchema>;

/** Refuses anything but a session id, which also keeps ids from naming paths outside the folder. */
export function assertSessionId(id: string): void {
  if (!SESSION_ID_PATTERN.test(id)) {
    throw new UsageError(
      `"${id}" is not a session id (expected ses_ followed by 26 lowercase letters and digits)`,
    );
  }
}

function sessionsDir(env: NodeJS.ProcessEnv): string {
  return join(planportHome(env), "sessions");
}

/** `~/.planport/sessions/<id>.json`; the id is checked first. */
export function sidecarPath(id: string, env: NodeJS.ProcessEnv = process.env): string {
  assertSessionId(id);
  return join(sessionsDir(env), `${id}.json`);
}

/** Reasons after which the session may still be running, so `attach` can pick it up. */
export const RESUMABLE = new Set<PollErrorReason>([
  "stopped",
  "timeout_pending",
  "timeout_no_plan",
  "network_or_unknown",
]);

/**
 * Saves where a poll got to (private to the user), so `attach` can carry on from there.
 */
export function saveSidecar(
  s: {
    sessionId: string;
    server: string;
    reviewUrl?: string;
    repo?: string;
    progress: PollProgress;
  },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const path = sidecarPath(s.sessionId, env);
  const body: Sidecar = {
    session_id: s.sessionId,
    server: s.server,
    review_url: s.reviewUrl,
    repo: s.repo,
    cursor: s.progress.cursor,
    scanner: s.progress.scanner,
    saved_at: new Date().toISOString(),
  };
  writePrivateFile(path, `${JSON.stringify(body, null, 2)}\n`);
  return path;
}

/** The saved progress, or null when there is none (or it is unreadable: start from the top). */
export function loadSidecar(id: string, env: NodeJS.ProcessEnv = process.env): Sidecar | null {
  const path = sidecarPath(id, env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const parsed = SidecarSchema.safeParse(safeJson(text));
  return parsed.success && parsed.data.session_id === id ? parsed.data : null;
}

/** Forgets a finished poll's progress. */
export function removeSidecar(id: string, env: NodeJS.ProcessEnv = process.env): void {
  rmSync(sidecarPath(id, env), { force: true });
}

/**
 * Takes the poll lock of a session for this process and returns its release. A lock left by a
 * process that no longer exists is taken over.
 *
 * @example
 * const release = acquirePollLock("ses_…");
 * try { await poll(); } finally { release(); }
 */
export function acquirePollLock(
  id: string,
  env: NodeJS.ProcessEnv = process.env,
  pid: number = process.pid,
): () => void {
  assertSessionId(id);
  const lock = tryPidLock(join(sessionsDir(env), `${id}.lock`), pid);
  if (!lock.ok) throw new PollLockedError(id, lock.error.heldBy);
  return lock.value;
}
