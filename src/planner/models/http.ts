import { ModelCallError } from "./types.ts";

/** Statuses worth another try: timeouts, conflicts, rate limits, server errors, 529 overloaded. */
const TRANSIENT_STATUSES = new Set([408, 409, 425, 429]);
const MAX_ERROR_BODY_CHARS = 2_000;

/** What to tell the user when a provider refuses the credentials or does not know the model. */
export interface ProviderHints {
  provider: string;
  auth: string;
  notFound: string;
}

/**
 * POSTs JSON to a model provider with plain `fetch` (runtime-neutral: workerd and Node) and
 * returns the parsed answer, or throws a {@link ModelCallError} that says whether a retry can
 * help and what to do otherwise.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  payload: unknown,
  signal: AbortSignal | undefined,
  hints: ProviderHints,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(payload),
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ModelCallError(
      `could not reach ${hints.provider} at ${new URL(url).origin}: ${(error as Error).message}`,
      true,
    );
  }
  const text = await response.text();
  if (!response.ok) {
    const transient = TRANSIENT_STATUSES.has(response.status) || response.status >= 500;
    const detail = providerMessage(text);
    const hint =
      response.status === 401 || response.status === 403
        ? ` ${hints.auth}`
        : response.status === 404
          ? ` ${hints.notFound}`
          : "";
    throw new ModelCallError(
      `${hints.provider} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}.${hint}`,
      transient,
      { status: response.status, retryAfterMs: retryAfterMs(response.headers) },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ModelCallError(`${hints.provider} sent an answer that is not JSON`, true);
  }
}

/** The provider's own error sentence (`{"error":{"type","message"}}`), else the start of the body. */
function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { type?: unknown; message?: unknown } | string };
    if (typeof body.error === "string") return body.error;
    const type = typeof body.error?.type === "string" ? `${body.error.type}: ` : "";
    if (typeof body.error?.message === "string") return `${type}${body.error.message}`;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.trim().slice(0, MAX_ERROR_BODY_CHARS);
}

/**
 * `retry-after` in seconds or as an HTTP date, or `retry-after-ms`, as milliseconds.
 *
 * @example
 * retryAfterMs(new Headers({ "retry-after": "2" })) // 2000
 */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * Joins a base URL (with or without a trailing slash) and a path.
 *
 * @example
 * joinUrl("https://api.anthropic.com/", "/v1/messages") // "https://api.anthropic.com/v1/messages"
 */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}
