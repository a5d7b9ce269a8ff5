import type { WebhookTarget } from "../config/urls.ts";
import {
  type AttemptResult,
  resultOfStatus,
  signatureOf,
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  type WebhookType,
} from "./events.ts";

/** How a request leaves the worker: `fetch`, or a receiver double in tests. */
export type WebhookFetch = (request: Request) => Promise<Response>;

/**
 * One delivery attempt: POSTs the stored body, signed with the current secret, and reads the
 * answer. Never throws: a network error, a timeout ({@link WEBHOOK_ATTEMPT_TIMEOUT_MS}) or a
 * refused redirect is a failed attempt. The reason names the receiver's origin only — the
 * rest of the URL may be a credential (a chat webhook's path is its key).
 */
export async function sendWebhook(
  send: WebhookFetch,
  target: WebhookTarget,
  delivery: { id: string; type: WebhookType; body: string },
  clock: () => number,
  timeoutMs: number = WEBHOOK_ATTEMPT_TIMEOUT_MS,
): Promise<AttemptResult> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const response = await send(
      new Request(target.url, {
        method: "POST",
        redirect: "manual",
        signal: abort.signal,
        headers: {
          "content-type": "application/json",
          "user-agent": "planport-webhooks",
          "x-planport-signature": await signatureOf(target.secret, delivery.body),
          "x-planport-event": delivery.type,
          "x-planport-delivery": delivery.id,
        },
        body: delivery.body,
      }),
    );
    const result = resultOfStatus(response.status, response.headers.get("retry-after"), clock());
    await response.body?.cancel().catch(() => {});
    return result;
  } catch (error) {
    const reason = abort.signal.aborted
      ? `no answer from ${originOf(target.url)} within ${timeoutMs / 1000} s`
      : `${originOf(target.url)} could not be reached (${withoutUrl(error, target.url)})`;
    return { kind: "failed", reason, retryAfterMs: null };
  } finally {
    clearTimeout(timer);
  }
}

/** An error's message with the receiver's full URL cut down to its origin. */
function withoutUrl(error: unknown, url: string): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replaceAll(url, originOf(url)).slice(0, 300);
}

/** The origin of the receiver's URL, the part of it that may be logged. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the webhook receiver";
  }
}
