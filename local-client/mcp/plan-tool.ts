import { statSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../errors.ts";
import { ExitPlanModeScanner } from "../poll/scanner.ts";
import { saveSidecar } from "../poll/sidecar.ts";
import { repositoryPlace, taskWithArea } from "../snapshot/repository-place.ts";
import { collectRepository, uploadRepository } from "../snapshot/upload.ts";
import type { ConnectionHolder } from "./connection.ts";
import { errorResult } from "./errors.ts";
import { planStartedText, type ToolText, toolText } from "./texts.ts";
import type { PlanArgs } from "./tools.ts";

/**
 * `plan`: what `planport plan` does up to the first poll — snapshot the repository, upload it
 * if the server lacks it, create the session — and then returns at once: the waiting is
 * `wait_for_plan`'s, so the agent can show the review link first. The session's sidecar is
 * written with its repository, so the wait saves a teleported plan where `plan` would.
 */

/**
 * The repository a call names (relative to `cwd`), checked to be a directory.
 *
 * @example
 * repositoryRoot(undefined, "/src/app") // → "/src/app"
 */
export function repositoryRoot(repo: string | undefined, cwd: string): string {
  const root = resolve(cwd, repo ?? ".");
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    throw new UsageError(`repo ${root} is not a directory: pass the repository to plan as "repo"`);
  }
  return root;
}

export async function startPlan(
  args: PlanArgs,
  ctx: { connection: ConnectionHolder; cwd: string; env: NodeJS.ProcessEnv; signal: AbortSignal },
): Promise<ToolText> {
  try {
    // From a subfolder: the whole repository is snapshotted, the subfolder is the area.
    const place = await repositoryPlace(repositoryRoot(args.repo, ctx.cwd));
    const root = place.root;
    // The embedded worker (if needed) starts while the snapshot is being built.
    const connecting = ctx.connection.get();
    connecting.catch(() => {});
    const tree = await collectRepository(root, { signal: ctx.signal, env: ctx.env });
    const conn = await connecting;
    const { api, server } = conn;
    const snapshot = await uploadRepository(api, conn, tree, { signal: ctx.signal, env: ctx.env });
    // Not retried: creating twice would start two sessions.
    const session = await api.createSession({
      prompt: taskWithArea(args.task, place.area),
      snapshot_id: snapshot.id,
      ...(args.variant ? { variant: args.variant } : {}),
      ...(args.planner ? { planner: args.planner } : {}),
      ...(args.seed_plan ? { seed_plan: args.seed_plan } : {}),
      ...(args.approvers ? { approvers: args.approvers } : {}),
    });
    saveSidecar(
      {
        sessionId: session.id,
        server,
        reviewUrl: session.review_url,
        repo: root,
        progress: { cursor: null, scanner: new ExitPlanModeScanner().state() },
      },
      ctx.env,
    );
    return toolText(
      planStartedText(
        session,
        { files: snapshot.files, skipped: snapshot.skipped.length },
        args.seed_plan !== undefined,
      ),
    );
  } catch (err) {
    return errorResult(err, { source: ctx.connection.source() });
  }
}
