import type {
  Decision,
  Event,
  FeedPage,
  Message,
  PlanDecisionRecord,
  PlanFile,
  Session,
  Suggestion,
} from "../protocol/index.ts";
import type { PlanRevisionInfo } from "./files/plan-file.ts";
import type { NewSession } from "./new-session.ts";
import type { Access, SessionResult } from "./result.ts";

/**
 * What the rest of the worker may ask one session's Durable Object over RPC, declared apart
 * from the class (session-object.ts `implements` it, so the two cannot drift): the worker's
 * `Env`, the routes, the owner index and the session's own group code read this, never the
 * class, so no module the object imports has to import the object back.
 */
export interface SessionRpc extends Rpc.DurableObjectBranded {
  /** Answers 42 from SQLite: a liveness probe of the object's storage. */
  ping(): number;
  create(input: NewSession): Promise<SessionResult<Session>>;
  get(access: Access, origin: string): SessionResult<Session>;
  listed(access: Access, origin: string): SessionResult<Session>;
  groupMember(access: Access, origin: string): SessionResult<GroupMember>;
  events(access: Access, afterId: string, limit: number): SessionResult<FeedPage>;
  review(access: Access, origin?: string): SessionResult<ReviewState>;
  plan(access: Access, revision?: number): SessionResult<PlanFile>;
  reviewDetails(access: Access, wanted: readonly number[]): SessionResult<ReviewDetails>;
  changes(access: Access): Promise<SessionResult<string>>;
  message(access: Access, body: Message, origin: string): Promise<SessionResult<Session>>;
  decide(access: Access, body: Decision, origin: string): Promise<SessionResult<Session>>;
  supersede(chosenId: string): Promise<void>;
  chosenPlan(): boolean;
  group(access: Access, origin: string): Promise<SessionResult<SessionGroup | null>>;
  archive(access: Access, origin: string): Promise<SessionResult<Session>>;
  suggest(access: Access, comment: { quote: string; text: string }): SessionResult<Suggestion[]>;
  suggestions(access: Access): SessionResult<Suggestion[]>;
}

/**
 * What callers outside the object may ask a session, each answer awaited over RPC. Mapped by
 * hand from {@link SessionRpc}: the workers-types RPC mapping turns a result that contains
 * `unknown` (tool inputs are arbitrary JSON) into `never`, although such values cross RPC fine.
 */
export type SessionApi = {
  [K in Exclude<keyof SessionRpc, keyof Rpc.DurableObjectBranded>]: (
    ...args: Parameters<SessionRpc[K]>
  ) => Promise<Awaited<ReturnType<SessionRpc[K]>>>;
};

/** What the review page shows, in one call. */
export interface ReviewState {
  session: Session;
  /** Null before the planner first writes the plan file. */
  plan: PlanFile | null;
  events: Event[];
  decisions: PlanDecisionRecord[];
  /** Comments readers left for whoever decides (team review). */
  suggestions: Suggestion[];
}

/** The review page's revision history and deadlines (see `reviewDetails`). */
export interface ReviewDetails {
  revisions: PlanRevisionInfo[];
  contents: PlanFile[];
  ask_timeout_s: number | null;
  /** ISO time the ask timeout answers the open question for the user; null when none is due. */
  afk_due_at: string | null;
  /** ISO time the ended session's data is deleted; null while it runs. */
  purge_due_at: string | null;
}

/** One session of a group as the review page shows it. */
export interface GroupMember {
  session: Session;
  /** Null until its planner writes a plan file. */
  plan: PlanFile | null;
}

/** A session's group: its name and every member (this session included), oldest first. */
export interface SessionGroup {
  name: string;
  members: GroupMember[];
}
