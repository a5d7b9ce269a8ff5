import type { IncomingMessage } from "node:http";
import {
  isServerChallenge,
  SERVER_CHALLENGE_HEADER,
  serverProof,
} from "../../src/protocol/index.ts";

/**
 * What a planport worker holding `tokens` answers on `GET /v1/healthz` (src/api/healthz.ts):
 * `{"ok": true}`, with a proof per token when the request carries a challenge. Test doubles that
 * stand in for a worker on 127.0.0.1 answer with it, as the real one does, because the CLI asks
 * a local server to prove itself before it sends a token (src/protocol/server-proof.ts).
 *
 * @example
 * if (path === "/v1/healthz") return json(res, 200, await healthzAnswer(req, [FAKE_TOKEN]));
 */
export async function healthzAnswer(
  req: IncomingMessage,
  tokens: string[],
): Promise<{ ok: true; proofs?: string[] }> {
  const challenge = req.headers[SERVER_CHALLENGE_HEADER.toLowerCase()];
  if (typeof challenge !== "string" || !isServerChallenge(challenge)) return { ok: true };
  return { ok: true, proofs: await Promise.all(tokens.map((t) => serverProof(t, challenge))) };
}
