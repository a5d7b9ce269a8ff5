import { costText, PHASE_LABELS, plannerLabel, type ReviewData, SUPERSEDED } from "./view.ts";

/**
 * What the group panel and the side-by-side comparison show of a session's best-of-N group,
 * decided from the loaded data alone (pure, like view.ts).
 */

/** One member of the group, as the group panel and the comparison show it. */
export interface GroupMemberView {
  id: string;
  title: string;
  planner: string;
  variant: string | null;
  phaseLabel: string;
  /** How the member came out, when the group decided: the chosen plan or a superseded one. */
  verdict: "chosen" | "superseded" | null;
  reviewUrl: string;
  /** This page's own session. */
  self: boolean;
  cost: string | null;
  /** The plan's markdown, or null before its planner wrote one. */
  plan: string | null;
  revision: number;
}

export interface GroupView {
  name: string;
  members: GroupMemberView[];
  /** How many members have a plan waiting for review. */
  ready: number;
  /** This page with `compare=1`: the plans side by side. */
  compareUrl: string;
}

/**
 * The group panel's and the comparison's view of the session's group; null when it has none.
 *
 * @example
 * groupView(data)?.members.map((m) => m.reviewUrl)
 */
export function groupView(data: ReviewData): GroupView | null {
  const group = data.group;
  if (!group || group.members.length === 0) return null;
  const members = group.members.map(({ session, plan }): GroupMemberView => {
    const outcome = session.outcome;
    const verdict =
      outcome?.kind === "approved" || outcome?.kind === "teleport"
        ? "chosen"
        : outcome?.subtype === SUPERSEDED
          ? "superseded"
          : null;
    return {
      id: session.id,
      title: session.title,
      planner: plannerLabel(session.planner),
      variant: session.variant ?? null,
      phaseLabel: PHASE_LABELS[session.phase],
      verdict,
      reviewUrl: session.review_url,
      self: session.id === data.session.id,
      cost: costText(session.usage.cost_usd),
      plan: plan?.content ?? null,
      revision: plan?.revision ?? 0,
    };
  });
  const own = data.session.review_url;
  return {
    name: group.name,
    members,
    ready: group.members.filter((m) => m.session.phase === "plan_ready").length,
    compareUrl: `${own}${own.includes("?") ? "&" : "?"}compare=1`,
  };
}
