import type { Env } from "../env.ts";
import type { SessionApi } from "./rpc.ts";

/**
 * The session object of an id.
 *
 * @example
 * const page = await sessionStub(env, id).events({ kind: "owner", owner }, "", 100);
 */
export function sessionStub(env: Env, sessionId: string): SessionApi {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionId)) as unknown as SessionApi;
}
