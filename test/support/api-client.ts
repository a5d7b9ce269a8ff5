import type {
  Decision,
  FeedPage,
  PlanFile,
  Session,
  SessionList,
} from "../../src/protocol/index.ts";

/**
 * A small HTTP client of the planport API for tests and benchmarks. Web APIs only, so it runs
 * inside workerd (over `exports.default.fetch`) and in Node (over `fetch` to `wrangler dev`).
 *
 * @example
 * const api = new ApiClient((req) => fetch(req), worker.url);
 * const session = await api.createSession({ token: "t" }, { prompt: "Add OAuth login" });
 * const page = await api.events({ token: "t" }, session.id, { limit: 1000 });
 */

export type Fetcher = (request: Request) => Promise<Response>;

/** How a call authenticates: a bearer token, a review key, or nothing. */
export type Auth = { token: string } | { reviewKey: string } | Record<string, never>;

export interface CallOptions {
  /** Sent as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** A raw body (content type from `headers`). */
  body?: BodyInit;
  headers?: Record<string, string>;
}

/** An answer that was not the expected status: carries the status and the body text. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what} answered ${status}: ${body.slice(0, 500)}`);
    this.name = "ApiCallError";
  }
}

export class ApiClient {
  constructor(
    readonly fetcher: Fetcher,
    readonly base = "http://planport.test",
  ) {}

  /** Any call; returns the raw Response (status checks, error bodies). */
  call(method: string, path: string, auth: Auth = {}, opts: CallOptions = {}): Promise<Response> {
    const headers = new Headers(opts.headers);
    if ("token" in auth) headers.set("authorization", `Bearer ${auth.token}`);
    if ("reviewKey" in auth) headers.set("x-review-key", auth.reviewKey);
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    return this.fetcher(new Request(`${this.base}${path}`, { method, headers, body }));
  }

  createSession(auth: Auth, body: Record<string, unknown>): Promise<Session> {
    return this.expect<Session>(201, "POST", "/v1/sessions", auth, { json: body });
  }

  listSessions(auth: Auth, query: { limit?: number; before?: string } = {}): Promise<SessionList> {
    return this.expect<SessionList>(200, "GET", `/v1/sessions${queryString(query)}`, auth);
  }

  getSession(auth: Auth, id: string): Promise<Session> {
    return this.expect<Session>(200, "GET", `/v1/sessions/${id}`, auth);
  }

  events(
    auth: Auth,
    id: string,
    query: { after_id?: string; limit?: number } = {},
  ): Promise<FeedPage> {
    return this.expect<FeedPage>(
      200,
      "GET",
      `/v1/sessions/${id}/events${queryString(query)}`,
      auth,
    );
  }

  /** Every event, following `has_more` pages of `pageSize`. */
  async allEvents(auth: Auth, id: string, pageSize = 1000): Promise<FeedPage["data"]> {
    const all: FeedPage["data"] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.events(auth, id, { after_id: after, limit: pageSize });
      all.push(...page.data);
      if (!page.has_more) return all;
      after = page.last_id ?? undefined;
    }
  }

  plan(auth: Auth, id: string): Promise<PlanFile> {
    return this.expect<PlanFile>(200, "GET", `/v1/sessions/${id}/plan`, auth);
  }

  async changes(auth: Auth, id: string): Promise<string> {
    const res = await this.call("GET", `/v1/sessions/${id}/changes`, auth);
    const text = await res.text();
    if (res.status !== 200)
      throw new ApiCallError(res.status, text, `GET /v1/sessions/${id}/changes`);
    return text;
  }

  message(auth: Auth, id: string, body: Record<string, unknown>): Promise<Session> {
    return this.expect<Session>(202, "POST", `/v1/sessions/${id}/messages`, auth, { json: body });
  }

  decide(
    auth: Auth,
    id: string,
    body: Partial<Decision> & Record<string, unknown>,
  ): Promise<Session> {
    return this.expect<Session>(200, "POST", `/v1/sessions/${id}/decision`, auth, { json: body });
  }

  archive(auth: Auth, id: string): Promise<Session> {
    return this.expect<Session>(200, "POST", `/v1/sessions/${id}/archive`, auth);
  }

  /** Uploads a tar.gz; returns the raw Response (201 with the receipt, or the refusal). */
  uploadSnapshot(auth: Auth, tarGz: Uint8Array): Promise<Response> {
    return this.call("POST", "/v1/snapshots", auth, {
      // A copy backed by a plain ArrayBuffer, which every runtime's BodyInit accepts.
      body: tarGz.slice(),
      headers: { "content-type": "application/gzip" },
    });
  }

  private async expect<T>(
    status: number,
    method: string,
    path: string,
    auth: Auth,
    opts?: CallOptions,
  ): Promise<T> {
    const res = await this.call(method, path, auth, opts);
    const text = await res.text();
    if (res.status !== status) throw new ApiCallError(res.status, text, `${method} ${path}`);
    return JSON.parse(text) as T;
  }
}

function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
