import { apiBase, reviewKey } from "./page-state.ts";

/** An answer of the JSON API that is not a success, with the API's own code and sentence. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Calls the session's JSON API with the review key; throws an {@link ApiError} carrying the
 * server's error sentence (or a generic one) for anything but a 2xx.
 *
 * @example
 * const session = await (await callApi("GET", "")).json();
 */
export async function callApi(method: string, path: string, payload?: unknown): Promise<Response> {
  const headers: Record<string, string> = { "X-Review-Key": reviewKey, Accept: "application/json" };
  const init: RequestInit = { method, headers, cache: "no-store", credentials: "omit" };
  if (payload !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(payload);
  }
  let res: Response;
  try {
    res = await fetch(apiBase + path, init);
  } catch {
    throw new ApiError(
      0,
      "network",
      "Could not reach the planport server. Check your connection and try again.",
    );
  }
  if (res.ok) return res;
  let code = `http_${res.status}`;
  let message = `The server answered with status ${res.status}.`;
  try {
    const data: unknown = await res.json();
    const error = (data as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    if (error && typeof error.message === "string") {
      code = String(error.code);
      message = error.message;
    }
  } catch {
    // Not a JSON error body: keep the generic sentence.
  }
  throw new ApiError(res.status, code, message);
}

/** The sentence of any thrown value, for the page to show. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
