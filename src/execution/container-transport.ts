import type { Env } from "../env.ts";
import { EXECUTOR_ERRORS } from "../protocol/index.ts";
import type { ExecutorTransport } from "./client.ts";

/**
 * The way to the executor on Cloudflare: every request of the executor's HTTP API
 * (src/protocol/execution.ts) goes to the session's own container — a container-enabled Durable
 * Object named after the session (cloudflare-container.ts), which starts the container when it
 * is not running, waits for the command server's port and hands the request on. This module
 * never imports the class: the session object reaches it through the binding, as it reaches
 * every other object.
 */

/** What the worker asks of a session's container object beyond `fetch` (it `implements` this). */
export interface CommandContainerRpc extends Rpc.DurableObjectBranded {
  /** Stops and removes the session's container; nothing when none runs. */
  end(): Promise<void>;
}

/**
 * The transport to the command server in the container of `sessionId`. Errors of the way there
 * (no binding, containers not enabled for the class, the call failing) come back as the API's
 * 503 `executor_unavailable`, never as a throw, so the caller handles one kind of answer.
 *
 * @example
 * const send = containerTransport(env, sessionId);
 * const res = await send(new Request(`http://executor/v1/sessions/${sessionId}/run`, { method: "POST", body }));
 */
export function containerTransport(env: Env, sessionId: string): ExecutorTransport {
  return async (request) => {
    const namespace = env.EXECUTOR_CONTAINERS;
    if (namespace === undefined) {
      return executorUnavailable(
        "This worker has no EXECUTOR_CONTAINERS binding (wrangler.toml [[containers]]), so cloud execution cannot run commands here.",
      );
    }
    try {
      return await namespace.get(namespace.idFromName(sessionId)).fetch(request);
    } catch (error) {
      return executorUnavailable(unreachable(error));
    }
  };
}

/** The API's 503 `executor_unavailable` answer, with the sentence a user acts on. */
export function executorUnavailable(message: string): Response {
  return Response.json(
    { error: { code: EXECUTOR_ERRORS.unavailable, message } },
    { status: 503, headers: { "retry-after": "10" } },
  );
}

/**
 * The sentence for a call to the container object that threw. The package's constructor throws
 * when the class has no container (wrangler dev and the embedded worker run with containers
 * off: commands go to the local executor there, so reaching this is a wiring mistake).
 */
function unreachable(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/containers have not been enabled/i.test(message)) {
    return "Cloudflare Containers are not enabled where this worker runs (wrangler dev and the embedded worker run commands through the local executor instead; docs/EXECUTION.md).";
  }
  return `The session's container could not be reached: ${message}`;
}
