import type { Env } from "../env.ts";
import { type Failure, ok, type Result } from "../protocol/index.ts";
import type { ReviewData } from "../review/index.ts";
import { reviewWithGroup } from "../session/groups.ts";
import { sessionStub } from "../session/stub.ts";

/**
 * The review page's data for the holder of `key`: the session's review state and group
 * (reviewWithGroup), its plan revisions and deadlines, the text of the `revisions` the page
 * shows or compares, and after a remote execution its changes. What is extra to the review
 * state never fails the page: without it the page shows less, and says nothing false.
 *
 * @example
 * reviewRoutes<Env>((env) => ({ loadReview: (id, key, want) => reviewPageData(env, id, key, want) }))
 */
export async function reviewPageData(
  env: Env,
  sessionId: string,
  key: string,
  want: { revisions: readonly number[] } = { revisions: [] },
): Promise<Result<ReviewData, Failure>> {
  const base = await reviewWithGroup(env, sessionId, key);
  if (!base.ok) return base;
  const stub = sessionStub(env, sessionId);
  const access = { kind: "review", key } as const;
  const data: ReviewData = { ...base.value };
  try {
    // Straight from the namespace: its answer holds no `unknown`, so the RPC types map it.
    const details = await env.SESSIONS.get(env.SESSIONS.idFromName(sessionId)).reviewDetails(
      access,
      want.revisions,
    );
    if (details.ok) {
      const { revisions, contents, ...deadlines } = details.value;
      Object.assign(data, { revisions, revisionTexts: contents, deadlines });
    }
  } catch (err) {
    console.error(`planport: loading the revisions of ${sessionId} failed`, err);
  }
  const { session } = base.value;
  if (session.outcome?.kind === "approved" && session.phase === "done") {
    try {
      const changes = await stub.changes(access);
      if (changes.ok) data.changes = changes.value;
    } catch (err) {
      // The page's script still fetches the changes itself when they are not rendered here.
      console.error(`planport: loading the changes of ${sessionId} failed`, err);
    }
  }
  return ok(data);
}
