import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  isServerChallenge,
  newServerChallenge,
  SERVER_CHALLENGE_HEADER,
  serverProof,
} from "../../src/protocol/index.ts";

/** The worker's tokens in this project (vitest.config.ts): alice, bob, owner-0…15. */
async function healthz(challenge?: string): Promise<{ ok: boolean; proofs?: string[] }> {
  const res = await exports.default.fetch("http://planport.test/v1/healthz", {
    headers: challenge === undefined ? {} : { [SERVER_CHALLENGE_HEADER]: challenge },
  });
  expect(res.status).toBe(200);
  return res.json();
}

describe("the server proves it holds a token before any token is sent", () => {
  it("answers a challenge with one proof per configured token, each bound to the challenge", async () => {
    const challenge = newServerChallenge();
    expect(isServerChallenge(challenge)).toBe(true);
    const answer = await healthz(challenge);
    expect(answer.ok).toBe(true);
    expect(answer.proofs).toContain(await serverProof("token-alice", challenge));
    expect(answer.proofs).toContain(await serverProof("token-bob", challenge));
    // A token it does not hold has no proof; another challenge's proof does not match.
    expect(answer.proofs).not.toContain(await serverProof("token-mallory", challenge));
    expect(answer.proofs).not.toContain(await serverProof("token-alice", newServerChallenge()));
  }, 60_000);

  it("without a challenge, or with a malformed one, the health check is the plain {ok: true}", async () => {
    expect(await healthz()).toEqual({ ok: true });
    expect(await healthz("short")).toEqual({ ok: true });
    expect(await healthz(`${"a".repeat(30)}!`)).toEqual({ ok: true });
  });

  it("a proof is a keyed hash of the challenge: the same inputs give the same proof, others differ", async () => {
    const challenge = newServerChallenge();
    expect(await serverProof("t", challenge)).toBe(await serverProof("t", challenge));
    expect(await serverProof("t", challenge)).toMatch(/^[0-9a-f]{64}$/);
    expect(await serverProof("u", challenge)).not.toBe(await serverProof("t", challenge));
  });
});
