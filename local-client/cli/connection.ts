import { UsageError } from "../errors.ts";
import { readUserConfig, userConfigPath } from "../home.ts";
import {
  type Api,
  ApiError,
  createApi,
  normalizeServer,
  type ServerProofResult,
} from "../http/api.ts";

/**
 * Which server and token a command uses: the flags, else `PLANPORT_URL` / `PLANPORT_TOKEN`,
 * else the user config written by `planport serve`, else the embedded local worker.
 */

export type ServerSource = "flags" | "env" | "config" | "embedded";

export interface Connection {
  server: string;
  token: string;
  source: ServerSource;
  api: Api;
  /**
   * Leaves the embedded worker (it stops when nothing else needs it); a no-op otherwise.
   * Resolves with the worker this command started when it keeps running, which it also says in
   * a note unless `quiet` (the caller then says it in its own words).
   */
  release(opts?: { quiet?: boolean }): Promise<KeptRunning | null>;
}

/** The embedded worker a command started and leaves running, for the sessions open in it. */
export interface KeptRunning {
  server: string;
  pid: number;
  openSessions: number;
}

/**
 * The sentence for a worker left running: where, why, and how to stop it.
 *
 * @example
 * keptRunningText({ server: "http://127.0.0.1:8787", pid: 42, openSessions: 1 })
 * // → "The local planport worker keeps running at http://127.0.0.1:8787 (pid 42) for 1 open session(s); …"
 */
export function keptRunningText(kept: KeptRunning): string {
  const why =
    kept.openSessions > 0
      ? ` for ${kept.openSessions} open session(s); \`planport stop <id>\` closes one,`
      : ";";
  return `The local planport worker keeps running at ${kept.server} (pid ${kept.pid})${why} \`planport embedded --stop\` stops the worker.`;
}

export type ResolvedServer =
  | { kind: "remote"; server: string; token: string; source: Exclude<ServerSource, "embedded"> }
  | { kind: "embedded" };

/**
 * Pure resolution. A server without a token is bad input: guessing one would send a token meant
 * for one server to another.
 *
 * @example
 * resolveServer({ server: "http://h:8787", token: "t" }, {}, null)
 * // → { kind: "remote", server: "http://h:8787", token: "t", source: "flags" }
 */
export function resolveServer(
  flags: { server?: string; token?: string },
  env: NodeJS.ProcessEnv,
  config: { url: string; token: string } | null,
): ResolvedServer {
  const fromFlags = flags.server !== undefined && flags.server !== "";
  const fromEnv = !fromFlags && !!env.PLANPORT_URL;
  const server = fromFlags ? flags.server : fromEnv ? env.PLANPORT_URL : config?.url;
  if (server === undefined) return { kind: "embedded" };
  const source = fromFlags ? "flags" : fromEnv ? "env" : "config";
  const sameAsConfig = config !== null && safeNormalize(config.url) === safeNormalize(server);
  const token = flags.token || env.PLANPORT_TOKEN || (sameAsConfig ? config.token : undefined);
  if (!token) {
    throw new UsageError(
      `no token for ${server}: pass --token or set PLANPORT_TOKEN (the token is one of the worker's PLANPORT_TOKENS)`,
    );
  }
  return { kind: "remote", server: normalizeServer(server), token, source };
}

function safeNormalize(url: string): string {
  try {
    return normalizeServer(url);
  } catch {
    return url;
  }
}

/**
 * Which server the flags, environment and user config name (no request is made); a
 * {@link UsageError} for a config file that cannot be read or a server without a token.
 *
 * @example
 * serverFor({}, process.env).kind // → "embedded" when nothing names a server
 */
export function serverFor(
  flags: { server?: string; token?: string },
  env: NodeJS.ProcessEnv = process.env,
): ResolvedServer {
  let config: { url: string; token: string } | null;
  try {
    config = readUserConfig(env);
  } catch (err) {
    throw new UsageError(
      `${(err as Error).message}; fix it, or delete it and run \`planport serve\` again`,
    );
  }
  return resolveServer(flags, env, config);
}

/** How long a named server has to answer `/v1/healthz` before `plan` builds a snapshot for it. */
export const SERVER_CHECK_TIMEOUT_MS = 5_000;

/**
 * Asks a server given by --server, PLANPORT_URL or the config whether it is there, so `plan`
 * refuses (exit 6) before any work rather than after snapshotting. The embedded worker is not
 * asked: connecting started it and waited for its healthz.
 *
 * @example
 * await assertServerAnswers(conn); // throws ApiError "could not reach http://…: no answer within 5s"
 */
export async function assertServerAnswers(conn: Connection, signal?: AbortSignal): Promise<void> {
  // The embedded worker was started or proved on connecting, as was a server on loopback.
  if (conn.source === "embedded" || isLoopbackServer(conn.server)) return;
  const problem = await conn.api.health(SERVER_CHECK_TIMEOUT_MS, signal);
  if (problem !== null) {
    throw new ApiError(0, "server_unreachable", `could not reach ${conn.server}: ${problem}`);
  }
}

/** How long a local server has to prove it holds the token before any request carries it. */
export const SERVER_PROOF_TIMEOUT_MS = 5_000;

/**
 * Whether a server URL is on this machine's loopback: a port there may be held by any user of
 * the machine, so such a server proves it holds the token before the token is sent
 * ({@link connect}). A server elsewhere is trusted as its URL says (https proves itself).
 *
 * @example
 * isLoopbackServer("http://127.0.0.1:8787") // → true
 */
export function isLoopbackServer(server: string): boolean {
  const host = new URL(server).hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Resolves and, for the embedded worker, starts or reuses it (with `start: false`, the
 * read-only commands, only reuses it: an `EmbeddedNotRunning` otherwise). A server on this
 * machine's loopback must first prove it holds the token (src/protocol/server-proof.ts):
 * another user may hold the port, and would otherwise receive the token.
 *
 * @example
 * const conn = await connect({ server: opts.server, token: opts.token }, { signal, note, status });
 * try { await conn.api.listSessions(); } finally { await conn.release(); }
 */
export async function connect(
  flags: { server?: string; token?: string },
  ui: { note: (m: string) => void; status: (m: string) => void; signal?: AbortSignal },
  env: NodeJS.ProcessEnv = process.env,
  opts: { start?: boolean } = {},
): Promise<Connection> {
  const resolved = serverFor(flags, env);
  if (resolved.kind === "remote") {
    const api = createApi({ server: resolved.server, token: resolved.token, signal: ui.signal });
    if (isLoopbackServer(resolved.server)) {
      const proof = await api.proveServer(SERVER_PROOF_TIMEOUT_MS, ui.signal);
      if (proof.kind !== "proved") throw unprovenServer(resolved.server, resolved.source, proof);
    }
    return { ...resolved, api, release: async () => null };
  }
  // Loaded only when used: a command against a configured server never pays for it.
  const { useEmbeddedWorker } = await import("../embedded/worker.ts");
  const local = await useEmbeddedWorker({
    env,
    start: opts.start,
    // A line of its own, not a spinner's text: it stays on screen (the README's transcript).
    onStart: () => ui.note("starting the local planport worker…"),
  });
  if (local.movedFrom !== null) ui.note(movedPortText(local.movedFrom, local.server));
  const api = createApi({ server: local.server, token: local.token, signal: ui.signal });
  return {
    server: local.server,
    token: local.token,
    source: "embedded",
    api,
    async release(opts = {}) {
      const { stopped, openSessions } = await local.release();
      // Said by the process that started it: that is where the user expects it to end.
      if (!local.started || stopped) return null;
      const kept = { server: local.server, pid: local.pid, openSessions: openSessions.length };
      if (opts.quiet !== true && openSessions.length > 0) ui.note(keptRunningText(kept));
      return kept;
    },
  };
}

/**
 * Why a local server was not used, and what to do: each a status-0 ApiError (exit 6) that names
 * where the server came from — the token was not sent.
 */
function unprovenServer(
  server: string,
  source: ServerSource,
  proof: Exclude<ServerProofResult, { kind: "proved" }>,
): ApiError {
  const from = sourceHint(source);
  switch (proof.kind) {
    case "unreachable":
    case "not_planport":
      return new ApiError(
        0,
        "server_unreachable",
        `could not reach ${server}: ${proof.detail} (${from})`,
      );
    case "not_holding_token":
      return new ApiError(
        0,
        "token_not_held",
        `the planport worker at ${server} does not hold your token, so it was not sent: check --token or PLANPORT_TOKEN (another user's program may also be answering on that port) (${from})`,
      );
  }
}

/**
 * The sentence for an embedded worker that could not have its old port back: links printed
 * before lead to whatever program holds it now (perhaps another user's).
 *
 * @example
 * movedPortText(8787, "http://127.0.0.1:40111")
 * // → "the local planport worker could not have its port 8787 back (another program holds it) and now runs at http://127.0.0.1:40111: …"
 */
export function movedPortText(from: number, server: string): string {
  return `the local planport worker could not have its port ${from} back (another program holds it) and now runs at ${server}: open only review links planport prints from now on — older ones lead to that other program`;
}

/** A hint naming where the server came from, for "cannot reach" errors. */
export function sourceHint(source: ServerSource, env: NodeJS.ProcessEnv = process.env): string {
  switch (source) {
    case "flags":
      return "from --server";
    case "env":
      return "from PLANPORT_URL";
    case "config":
      return `from ${userConfigPath(env)}, written by \`planport serve\`; start it again or delete that file`;
    case "embedded":
      return "the embedded local worker";
  }
}
