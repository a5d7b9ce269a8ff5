import {
  EXECUTOR_ERRORS,
  type ExecutorHealth,
  ExecutorHealth as ExecutorHealthSchema,
  type RunRequest,
  type RunResult,
  RunResult as RunResultSchema,
} from "../protocol/index.ts";

/**
 * The session's side of the command executor's HTTP API (src/protocol/execution.ts): one
 * client over a transport, whichever server answers — the command server in a Cloudflare
 * container, or the local executor that drives Docker. Every answer is checked against its
 * schema: a server's body is never trusted to be what it claims.
 */

/** Sends one request to the executor (a container's fetch, or a fetch with a bearer token). */
export type ExecutorTransport = (request: Request) => Promise<Response>;

/** How long a run may take beyond its own timeout before the session stops waiting. */
const RUN_SLACK_MS = 120_000;
/** How long a health check, a workspace upload or a release may take. */
const HEALTH_TIMEOUT_MS = 10_000;
const UPLOAD_TIMEOUT_MS = 600_000;
const RELEASE_TIMEOUT_MS = 60_000;

/** A run's answer: the result, or the executor has no workspace for the session (yet, or any more). */
export type RunAnswer = { kind: "ran"; result: RunResult } | { kind: "workspace_missing" };

export class ExecutorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExecutorError";
  }
}

/**
 * @example
 * const client = new ExecutorClient(transport, "the local executor (Docker)");
 * (await client.health()).ok // false when Docker is not running, with `reason`
 */
export class ExecutorClient {
  constructor(
    private readonly transport: ExecutorTransport,
    /** What the executor is, for error sentences. */
    readonly where: string,
  ) {}

  async health(): Promise<ExecutorHealth> {
    let response: Response;
    try {
      response = await this.send("GET", "/v1/health", null, HEALTH_TIMEOUT_MS);
    } catch (err) {
      return { ok: false, executor: "unknown", reason: reasonOf(err) };
    }
    const body = await readJson(response);
    const parsed = ExecutorHealthSchema.safeParse(body);
    if (!parsed.success) {
      return {
        ok: false,
        executor: "unknown",
        reason: `${this.where} answered its health check with HTTP ${response.status} and a body that is not a health report.`,
      };
    }
    return response.ok ? parsed.data : { ...parsed.data, ok: false };
  }

  /** Replaces the session's workspace with the tree in `tar` (an uncompressed tar). */
  async putWorkspace(
    sessionId: string,
    tar: ReadableStream<Uint8Array> | Uint8Array,
  ): Promise<void> {
    const response = await this.send(
      "PUT",
      `/v1/sessions/${encodeURIComponent(sessionId)}/workspace`,
      { body: tar, type: "application/x-tar" },
      UPLOAD_TIMEOUT_MS,
    );
    if (!response.ok) throw await this.failure(response, "did not take the workspace");
    await response.body?.cancel();
  }

  async run(sessionId: string, request: RunRequest): Promise<RunAnswer> {
    const response = await this.send(
      "POST",
      `/v1/sessions/${encodeURIComponent(sessionId)}/run`,
      { body: JSON.stringify(request), type: "application/json" },
      request.timeout_ms + RUN_SLACK_MS,
    );
    const body = await readJson(response);
    if (response.status === 409 && errorCode(body) === EXECUTOR_ERRORS.workspaceMissing) {
      return { kind: "workspace_missing" };
    }
    if (!response.ok) throw this.failureOf(response.status, body, "did not run the command");
    const parsed = RunResultSchema.safeParse(body);
    if (!parsed.success) {
      throw new ExecutorError(`${this.where} answered a run with a body that is not a run result.`);
    }
    return { kind: "ran", result: parsed.data };
  }

  /** Stops and removes the session's container; idempotent. */
  async release(sessionId: string): Promise<void> {
    const response = await this.send(
      "DELETE",
      `/v1/sessions/${encodeURIComponent(sessionId)}`,
      null,
      RELEASE_TIMEOUT_MS,
    );
    if (!response.ok && response.status !== 404) {
      throw await this.failure(response, "did not release the container");
    }
    await response.body?.cancel();
  }

  private async send(
    method: string,
    path: string,
    body: { body: BodyInit; type: string } | null,
    timeoutMs: number,
  ): Promise<Response> {
    const request = new Request(`http://executor${path}`, {
      method,
      ...(body !== null && { body: body.body, headers: { "content-type": body.type } }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    try {
      return await this.transport(request);
    } catch (err) {
      throw new ExecutorError(`${this.where} could not be reached: ${reasonOf(err)}`);
    }
  }

  private async failure(response: Response, what: string): Promise<ExecutorError> {
    return this.failureOf(response.status, await readJson(response), what);
  }

  private failureOf(status: number, body: unknown, what: string): ExecutorError {
    const message = errorMessage(body);
    return new ExecutorError(
      `${this.where} ${what} (HTTP ${status}${message === null ? "" : `: ${message}`}).`,
    );
  }
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

function errorCode(body: unknown): string | null {
  const error = (body as { error?: { code?: unknown } } | null)?.error;
  return typeof error?.code === "string" ? error.code : null;
}

/** The server's sentence, cut short: it is shown to the model and the user. */
function errorMessage(body: unknown): string | null {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof error?.message === "string" ? error.message.slice(0, 500) : null;
}

function reasonOf(err: unknown): string {
  if (err instanceof Error && err.name === "TimeoutError") return "it did not answer in time";
  return err instanceof Error ? err.message : String(err);
}
