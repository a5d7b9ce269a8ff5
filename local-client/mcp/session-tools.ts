import { refusePull, refuseStop } from "../cli/sentences.ts";
import { sessionDetails, sessionTable } from "../cli/table.ts";
import { applyChanges } from "../handoff/apply-changes.ts";
import { withRetry } from "../http/api.ts";
import { terminalText } from "../terminal/text.ts";
import type { ConnectionHolder } from "./connection.ts";
import { errorResult } from "./errors.ts";
import { repositoryRoot } from "./plan-tool.ts";
import { diffText, stoppedText, type ToolText, toolError, toolText } from "./texts.ts";
import type { PullArgs } from "./tools.ts";

/**
 * `status`, `list`, `stop`, `pull_changes`: one API call each, as `planport status`, `list`,
 * `stop` and `pull` make it (cli/session-commands.ts), answered as text. The tables are the
 * CLI's (cli/table.ts), terminal-safe by construction.
 */

type Context = { connection: ConnectionHolder; cwd: string };

async function withApi(
  ctx: Context,
  sessionId: string | undefined,
  fn: (conn: Awaited<ReturnType<ConnectionHolder["get"]>>) => Promise<ToolText>,
  readOnly = false,
): Promise<ToolText> {
  try {
    // A read-only tool never starts the embedded worker (as `planport status` and `list`).
    return await fn(await ctx.connection.get({ start: !readOnly }));
  } catch (err) {
    return errorResult(err, { source: ctx.connection.source(), sessionId });
  }
}

export function sessionStatus(id: string, ctx: Context): Promise<ToolText> {
  return withApi(
    ctx,
    id,
    async ({ api }) => {
      const session = await withRetry(() => api.getSession(id));
      return toolText(sessionDetails(session, Date.now()));
    },
    true,
  );
}

export function listSessions(limit: number | undefined, ctx: Context): Promise<ToolText> {
  return withApi(
    ctx,
    undefined,
    async ({ api }) => {
      const list = await withRetry(() => api.listSessions({ limit: limit ?? 20 }));
      if (list.data.length === 0) return toolText("No planport sessions yet: start one with plan.");
      const more = list.has_more ? "\n(more sessions exist: raise limit to see them)" : "";
      return toolText(`${sessionTable(list.data, Date.now())}${more}`);
    },
    true,
  );
}

export function stopSession(id: string, ctx: Context): Promise<ToolText> {
  return withApi(ctx, id, async ({ api }) => {
    // An ended session is left as it is, and the answer says how it ended (cli/sentences.ts).
    refuseStop(await withRetry(() => api.getSession(id)));
    const session = await withRetry(() => api.archive(id));
    return toolText(stoppedText(session));
  });
}

/** `pull_changes`: the diff, or (`apply`) what `planport pull --apply` does with it. */
export function pullChanges(args: PullArgs, ctx: Context): Promise<ToolText> {
  const id = args.session_id;
  return withApi(ctx, id, async ({ api }) => {
    const repo = args.apply ? repositoryRoot(args.repo, ctx.cwd) : null;
    refusePull(await withRetry(() => api.getSession(id)));
    const diff = await withRetry(() => api.changes(id));
    if (repo === null) return toolText(diffText(id, diff));
    if (diff === "") return toolText(`Session ${id} has no changes to apply (yet).`);
    const { ok, output } = await applyChanges(repo, diff);
    const said = output ? `\n${terminalText(output)}` : "";
    if (!ok) {
      return toolError(
        `git apply --3way could not apply the changes in ${repo}; save them with \`planport pull ${id} > changes.diff\` and merge by hand.${said}`,
      );
    }
    return toolText(`Applied the changes of ${id} in ${repo}.${said}`);
  });
}
