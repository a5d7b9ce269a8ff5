import { TRUSTED_TYPES_POLICY } from "../headers.ts";

/**
 * What every part of the browser script shares: the page's own facts (read once from the
 * server-rendered `<body>` and the URL), the mutable state of the poll loop, and the one
 * Trusted Types policy through which a string may become HTML.
 */

/** A comment on a passage of the plan, sent with "Keep planning". */
export interface PlanComment {
  quote: string;
  text: string;
}

/** The fields of `GET /v1/sessions/:id` the script reads (the JSON is the server's own). */
export interface PolledSession {
  status?: string;
  phase?: string;
  pending?: { tool_use_id?: string } | null;
  reject_count?: number;
  outcome?: { kind?: string } | null;
  terminal_polled_at?: string | null;
  suggestion_count?: number;
}

export const body = document.body;
export const sessionId = body.dataset.sessionId ?? "";
export const reviewKey = new URLSearchParams(location.search).get("key") ?? "";
export const apiBase = `/v1/sessions/${encodeURIComponent(sessionId)}`;
export const storageKey = `planport-review-comments:${sessionId}`;

export const state = {
  cursor: body.dataset.cursor ?? "",
  stateKey: body.dataset.state ?? "",
  /** Suggestions the rendered page lists; a poll that counts more refreshes it. */
  suggestionCount: Number(body.dataset.suggestions ?? "0"),
  session: null as PolledSession | null,
  clockSkewMs: 0,
  needsRefresh: false,
  refreshing: false,
  refreshAgain: false,
  stopped: false,
  failures: 0,
  timer: 0,
  polling: false,
  pollAgain: false,
  lastSelection: "",
  comments: [] as PlanComment[],
};

/** The part of the Trusted Types API the page uses (TypeScript's DOM library has none). */
interface TrustedTypesFactory {
  createPolicy(
    name: string,
    rules: { createHTML: (text: string) => string },
  ): { createHTML(text: string): unknown };
}

const trustedTypes = (window as Window & { trustedTypes?: TrustedTypesFactory }).trustedTypes;

// The page parses only its own server-rendered HTML, fetched from its own URL; this policy
// is the single place a string may become HTML (CSP: require-trusted-types-for 'script').
const policy = trustedTypes?.createPolicy
  ? trustedTypes.createPolicy(TRUSTED_TYPES_POLICY, { createHTML: (text) => text })
  : null;

/**
 * Parses HTML this page fetched from its own URL, through the page's Trusted Types policy.
 *
 * @example
 * const doc = parseOwnHtml(await res.text());
 */
export function parseOwnHtml(text: string): Document {
  // A TrustedHTML value is what the sink accepts where Trusted Types are enforced; TypeScript
  // types the sink as taking a string only.
  const markup = policy ? (policy.createHTML(text) as string) : text;
  return new DOMParser().parseFromString(markup, "text/html");
}
