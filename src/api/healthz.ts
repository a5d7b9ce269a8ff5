import type { Context } from "hono";
import { isServerChallenge, SERVER_CHALLENGE_HEADER, serverProof } from "../protocol/index.ts";
import type { AppEnv } from "./app-env.ts";
import { configuredTokens } from "./auth.ts";

/**
 * `GET /v1/healthz` (no auth): `{"ok": true}`; with a challenge header, also `proofs`, one per
 * configured token, so a client can tell this worker holds its token before sending it
 * (src/protocol/server-proof.ts). A challenge that is not well formed is ignored, not refused:
 * the route stays what any health check expects.
 *
 * @example
 * GET /v1/healthz                                  → {"ok": true}
 * GET /v1/healthz  X-Planport-Challenge: q3J0…     → {"ok": true, "proofs": ["9f2c…"]}
 */
export async function healthz(c: Context<AppEnv>): Promise<Response> {
  const challenge = c.req.header(SERVER_CHALLENGE_HEADER);
  if (!isServerChallenge(challenge)) return c.json({ ok: true });
  const tokens = configuredTokens(c.env.PLANPORT_TOKENS);
  const proofs = await Promise.all(tokens.map((token) => serverProof(token, challenge)));
  return c.json({ ok: true, proofs });
}
