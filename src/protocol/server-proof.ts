/**
 * How a client knows it speaks to the worker that holds its token before the token leaves the
 * client. A local worker listens on a loopback port any user of the machine could hold instead
 * (after a crash, before a restart, or on a port `planport serve` was told to use): whoever
 * answers there would receive the bearer token, the repository upload, and could answer with a
 * forged plan. So the client first asks `GET /v1/healthz` with a fresh random challenge
 * ({@link SERVER_CHALLENGE_HEADER}); the worker answers with `proofs`, one HMAC-SHA256 of the
 * challenge per configured token ({@link serverProof}), and the client checks that one of them
 * is the one its own token gives. Only a server that holds the token can make it; the token
 * itself never travels. Proofs are bound to a purpose string, so they are good for nothing
 * else, and to the challenge, so none can be replayed.
 */

/** The request header carrying the challenge. */
export const SERVER_CHALLENGE_HEADER = "X-Planport-Challenge";

/** A challenge: 22–128 base64url characters (the client sends 32 random bytes, 43). */
const CHALLENGE = /^[A-Za-z0-9_-]{22,128}$/;

/**
 * Whether a header value is a well-formed challenge.
 *
 * @example
 * isServerChallenge("x") // → false
 */
export function isServerChallenge(value: string | undefined | null): value is string {
  return typeof value === "string" && CHALLENGE.test(value);
}

/**
 * A fresh challenge: 32 random bytes, base64url.
 *
 * @example
 * newServerChallenge() // → "q3J0…" (43 characters)
 */
export function newServerChallenge(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * The proof a holder of `token` gives for `challenge`: hex HMAC-SHA256, keyed with the token,
 * of `planport-server-proof:v1:` and the challenge.
 *
 * @example
 * await serverProof("secret1", challenge) // → "9f2c…" (64 hex characters)
 */
export async function serverProof(token: string, challenge: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(token),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    encoder.encode(`planport-server-proof:v1:${challenge}`),
  );
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
