import { ExecutorClient } from "./client.ts";

/**
 * Where a session's commands run after "Approve and run in the cloud" (docs/EXECUTION.md),
 * from the worker's configuration:
 *
 * - `PLANPORT_EXECUTION = "overlay"`: no commands — the executing model edits the overlay
 *   with Read/Grep/Glob/Edit/Write only (a deployment's documented choice, never a fallback);
 * - `PLANPORT_EXECUTOR_URL` (+ `PLANPORT_EXECUTOR_TOKEN`): the local executor that drives Docker
 *   (the embedded worker starts one itself; `planport executor` prints these for `wrangler dev`);
 * - a container binding (`EXECUTOR_CONTAINERS`, wrangler.toml `[[containers]]`): Cloudflare
 *   Containers, a container per executing session;
 * - none of these: commands cannot run, and *approve* says so (409 `executor_unavailable`)
 *   before anything starts.
 */

/** The vars (and binding) this reads: a subset of the worker's Env. */
export interface ExecutionEnv {
  PLANPORT_EXECUTION?: string;
  PLANPORT_EXECUTOR_URL?: string;
  PLANPORT_EXECUTOR_TOKEN?: string;
}

export type Execution =
  | { kind: "overlay" }
  | { kind: "commands"; client: ExecutorClient }
  | { kind: "unavailable"; reason: string };

/** A binding-backed executor (Cloudflare Containers), for the session `sessionId`. */
export type ContainerExecutor = (sessionId: string) => ExecutorClient | null;

/**
 * The execution a session of this worker gets.
 *
 * @example
 * executionFor({ PLANPORT_EXECUTION: "overlay" }, "ses_1", null) // → { kind: "overlay" }
 */
export function executionFor(
  env: ExecutionEnv,
  sessionId: string,
  containers: ContainerExecutor | null,
): Execution {
  const setting = (env.PLANPORT_EXECUTION ?? "").trim();
  if (setting === "overlay") return { kind: "overlay" };
  if (setting !== "" && setting !== "commands") {
    return {
      kind: "unavailable",
      reason: `PLANPORT_EXECUTION is "${setting}"; it must be "commands" (the default: commands run in a container) or "overlay" (edits only, no commands).`,
    };
  }
  const url = (env.PLANPORT_EXECUTOR_URL ?? "").trim();
  if (url !== "") return localExecutor(url, env.PLANPORT_EXECUTOR_TOKEN ?? "");
  const container = containers?.(sessionId) ?? null;
  if (container !== null) return { kind: "commands", client: container };
  return {
    kind: "unavailable",
    reason:
      "No container can run commands for this worker: it has no executor (PLANPORT_EXECUTOR_URL for Docker on this machine, or a Cloudflare Containers binding). Start the local executor (`planport executor`) and pass what it prints to `wrangler dev`, or send the plan to your terminal instead; to let the cloud edit files without running commands, set PLANPORT_EXECUTION=overlay.",
  };
}

function localExecutor(url: string, token: string): Execution {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    return { kind: "unavailable", reason: `PLANPORT_EXECUTOR_URL is not a URL: ${url}` };
  }
  const transport = (request: Request): Promise<Response> => {
    const { pathname, search } = new URL(request.url);
    const target = new URL(`${base.pathname.replace(/\/$/, "")}${pathname}${search}`, base);
    const forwarded = new Request(target, request);
    forwarded.headers.set("authorization", `Bearer ${token}`);
    return fetch(forwarded);
  };
  return {
    kind: "commands",
    client: new ExecutorClient(transport, "The local executor (Docker on this machine)"),
  };
}
