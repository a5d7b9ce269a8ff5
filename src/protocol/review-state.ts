/**
 * The review's state key: the string the review page (server and browser script) and
 * `planport review` compare between polls to know what they show is stale. One definition, no
 * imports, so the browser bundle can take it without zod.
 */

/** The fields of a Session the key is built from (the browser reads them from the JSON). */
export interface ReviewStateFields {
  status?: string;
  phase?: string;
  pending?: { tool_use_id?: string } | null;
  reject_count?: number;
  outcome?: { kind?: string } | null;
}

/**
 * @example
 * reviewStateKey(session) // "requires_action|plan_ready|toolu_1|0|"
 */
export function reviewStateKey(session: ReviewStateFields): string {
  return [
    session.status,
    session.phase,
    session.pending?.tool_use_id ?? "",
    session.reject_count,
    session.outcome?.kind ?? "",
  ].join("|");
}
