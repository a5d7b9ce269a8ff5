import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app.ts";
import { DEFAULT_MAX_TURNS, readConfig } from "../../src/config.ts";
import { ApiClient } from "../support/api-client.ts";
import { ALICE, errorCode } from "../support/worker/sessions.ts";

/** One policy for every setting: unset takes the default, a wrong value is refused by name. */

describe("worker settings", () => {
  it("unset or empty vars take their defaults", () => {
    const config = readConfig({ PLANPORT_MAX_TURNS: "", PLANPORT_RATE_LIMITS: " " });
    expect(config).toEqual({
      ok: true,
      value: {
        planner: "auto",
        allowScripted: false,
        maxTurns: DEFAULT_MAX_TURNS,
        retentionMs: 7 * 86_400_000,
        idleMs: 30 * 86_400_000,
        rateLimits: true,
        requireApproval: "none",
        tokens: [],
        publicUrl: null,
        model: { timeoutMs: 120_000, attempts: 4, backoffMs: 1_000 },
        contextTokens: null,
        prices: {},
        webhook: null,
        executionNetwork: false,
      },
    });
  });

  it("reads every var it knows", () => {
    const config = readConfig({
      PLANPORT_PLANNER: "Offline",
      PLANPORT_ALLOW_SCRIPTED: "true",
      PLANPORT_MAX_TURNS: "12",
      PLANPORT_RETENTION_DAYS: "0.5",
      PLANPORT_IDLE_DAYS: "0.25",
      PLANPORT_RATE_LIMITS: "off",
      PLANPORT_PUBLIC_URL: "https://pp.example.com/base/",
      PLANPORT_MODEL_TIMEOUT_MS: "2000",
      PLANPORT_MODEL_ATTEMPTS: "2",
      PLANPORT_MODEL_BACKOFF_MS: "0",
      PLANPORT_CONTEXT_TOKENS: "8000",
      PLANPORT_PRICES: '{"my-model": {"input": 1, "output": 2, "cache_read": 0.1}}',
      PLANPORT_WEBHOOK_URL: "https://hooks.example.com/planport",
      PLANPORT_WEBHOOK_SECRET: "0123456789abcdef0123",
      PLANPORT_EXEC_NETWORK: "On",
    });
    expect(config.ok && config.value).toEqual({
      planner: "offline",
      allowScripted: true,
      maxTurns: 12,
      retentionMs: 43_200_000,
      idleMs: 21_600_000,
      rateLimits: false,
      requireApproval: "none",
      tokens: [],
      publicUrl: "https://pp.example.com/base",
      model: { timeoutMs: 2_000, attempts: 2, backoffMs: 0 },
      contextTokens: 8_000,
      // A cache price left out is the input price.
      prices: { "my-model": { input: 1, output: 2, cache_read: 0.1, cache_write: 1 } },
      webhook: { url: "https://hooks.example.com/planport", secret: "0123456789abcdef0123" },
      executionNetwork: true,
    });
  });

  it.each([
    ["PLANPORT_PLANNER", "gpt"],
    ["PLANPORT_ALLOW_SCRIPTED", "yes"],
    ["PLANPORT_MAX_TURNS", "0"],
    ["PLANPORT_MAX_TURNS", "2.5"],
    ["PLANPORT_MAX_TURNS", "lots"],
    ["PLANPORT_RETENTION_DAYS", "-1"],
    ["PLANPORT_IDLE_DAYS", "0"],
    ["PLANPORT_IDLE_DAYS", "-3"],
    ["PLANPORT_IDLE_DAYS", "a month"],
    ["PLANPORT_IDLE_DAYS", "3651"],
    ["PLANPORT_IDLE_DAYS", "Infinity"],
    ["PLANPORT_RATE_LIMITS", "maybe"],
    ["PLANPORT_EXEC_NETWORK", "yes"],
    ["PLANPORT_PUBLIC_URL", "javascript:alert(1)"],
    ["PLANPORT_MODEL_TIMEOUT_MS", "1e9"],
    ["PLANPORT_MODEL_ATTEMPTS", "9"],
    ["PLANPORT_CONTEXT_TOKENS", "500"],
    ["PLANPORT_CONTEXT_TOKENS", "128k"],
    ["PLANPORT_PRICES", "{not json"],
    ["PLANPORT_PRICES", '["gpt-4.1"]'],
    ["PLANPORT_PRICES", '{"m": {"input": 3}}'],
    ["PLANPORT_PRICES", '{"m": {"input": -1, "output": 2}}'],
    ["PLANPORT_PRICES", '{"m": {"input": 1, "output": 2, "cache": 1}}'],
  ])("refuses %s=%j with a sentence naming the var and the value", (name, value) => {
    const config = readConfig({ [name]: value });
    expect(config.ok).toBe(false);
    expect(!config.ok && config.error).toContain(`${name} is ${JSON.stringify(value)}`);
  });

  it("a misconfigured server answers 500 server_misconfigured naming the var; healthz stays up", async () => {
    const app = createApp();
    const api = new ApiClient(
      async (request) => await app.fetch(request, { ...env, PLANPORT_MAX_TURNS: "many" }),
    );
    const res = await api.call("GET", "/v1/sessions", ALICE);
    expect(res.status).toBe(500);
    const body = (await res.clone().json()) as { error: { message: string } };
    expect(await errorCode(res)).toBe("server_misconfigured");
    expect(body.error.message).toContain('PLANPORT_MAX_TURNS is "many"');
    expect((await api.call("GET", "/v1/healthz")).status).toBe(200);
  });

  it("PLANPORT_IDLE_DAYS takes fractional days and refuses 0 by name: the API answers 500", async () => {
    const idle = (days: string) => {
      const config = readConfig({ PLANPORT_IDLE_DAYS: days });
      return config.ok ? config.value.idleMs : config.error;
    };
    expect(idle(" 90 ")).toBe(90 * 86_400_000);
    expect(idle("1.5")).toBe(1.5 * 86_400_000);
    expect(idle("0")).toContain("a number of days above 0 and at most 3650");

    const app = createApp();
    const api = new ApiClient(
      async (request) => await app.fetch(request, { ...env, PLANPORT_IDLE_DAYS: "0" }),
    );
    const res = await api.call("GET", "/v1/sessions", ALICE);
    expect(res.status).toBe(500);
    expect(await errorCode(res.clone())).toBe("server_misconfigured");
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain('PLANPORT_IDLE_DAYS is "0"');
  });
});

describe("a misconfigured secret is never repeated (issue 22, finding 7)", () => {
  /** Every 4-character piece of `secret`, lower-cased: any longer piece holds one of them. */
  const piecesOf = (secret: string) =>
    Array.from({ length: secret.length - 3 }, (_, i) => secret.slice(i, i + 4).toLowerCase());
  const holdsAPiece = (text: string, secret: string) =>
    piecesOf(secret).filter((piece) => text.toLowerCase().includes(piece));

  /** Everything a caller sees: status line, headers and body. */
  async function seen(res: Response): Promise<string> {
    const headers = [...res.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
    return `${res.status}\n${headers}\n${await res.text()}`;
  }

  it("a bare token holding a ':' whose start is no label: every caller gets 500 naming entry 2, and no piece of the token", async () => {
    const token = "Zx9Q/Hw7+Rt2:Kp4Vm8Ny6Lb3";
    const app = createApp();
    const api = new ApiClient(
      async (request) =>
        await app.fetch(request, { ...env, PLANPORT_TOKENS: `token-alice,${token},token-bob` }),
    );
    const session = `ses_${"0".repeat(26)}`;
    const answers = [
      await api.call("GET", "/v1/sessions"),
      await api.call("GET", "/v1/sessions", { token: "guessing" }),
      await api.call("GET", "/v1/sessions", ALICE),
      await api.call("GET", "/v1/sessions", { token }),
      await api.call("POST", "/v1/sessions", ALICE, { json: { prompt: "plan it" } }),
      await api.call("GET", `/v1/sessions/${session}`, { reviewKey: "some-key-0123456789" }),
      await api.call("GET", `/review/${session}?key=some-key-0123456789`),
      await api.call("GET", "/v1/healthz"),
    ];
    for (const res of answers.slice(0, -1)) {
      expect(res.status).toBe(500);
      const body = (await res.clone().json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("server_misconfigured");
      expect(body.error.message).toContain("entry 2 of PLANPORT_TOKENS");
    }
    for (const res of answers) {
      const text = await seen(res);
      expect(holdsAPiece(text, token), text).toEqual([]);
    }
  });

  it.each([
    ["a label that is not one", "Qv7Kz:Wd3Rp9Lx", "entry 1 of PLANPORT_TOKENS"],
    ["a label of 8 hex digits", "Bq2Jx7Wr,3f5c1a2b:Wd3Rp9Lx", "entry 2 of PLANPORT_TOKENS"],
    [
      "a label given twice",
      "qv7kz:Wd3Rp9Lx,qv7kz:Ty6Hn2Bm",
      "entry 2 of PLANPORT_TOKENS has the same label as entry 1",
    ],
    [
      "a token given twice",
      "qv7kz:Wd3Rp9Lx,jm4ws:Wd3Rp9Lx",
      "entry 2 of PLANPORT_TOKENS repeats the token of entry 1",
    ],
    ["a label with no token", "Bq2Jx7Wr,qv7kz:", "entry 2 of PLANPORT_TOKENS"],
  ])(
    "PLANPORT_TOKENS with %s names the entry by position, never by content",
    (_what, tokens, says) => {
      const config = readConfig({ PLANPORT_TOKENS: tokens });
      expect(config.ok).toBe(false);
      const error = config.ok ? "" : config.error;
      expect(error).toContain(says);
      for (const entry of tokens.split(",")) expect(holdsAPiece(error, entry), error).toEqual([]);
    },
  );

  it.each([
    [
      "PLANPORT_WEBHOOK_URL with no scheme",
      {
        PLANPORT_WEBHOOK_URL: "Xq7SecretPart:Mv9Wq",
        PLANPORT_WEBHOOK_SECRET: "0123456789abcdef0123",
      },
      "Xq7SecretPart:Mv9Wq",
    ],
    [
      "PLANPORT_PUBLIC_URL with credentials",
      { PLANPORT_PUBLIC_URL: "https://deploy:Hn4Tq8Wz@pp.example.com/" },
      "deploy:Hn4Tq8Wz",
    ],
    [
      "PLANPORT_PUBLIC_URL with a key in its query",
      { PLANPORT_PUBLIC_URL: "https://pp.example.com/?key=Gm5Rv2Xc" },
      "key=Gm5Rv2Xc",
    ],
  ])("%s is refused by name, without repeating its secret", (_what, vars, secret) => {
    const config = readConfig(vars);
    expect(config.ok).toBe(false);
    const error = config.ok ? "" : config.error;
    expect(error).toContain(Object.keys(vars)[0]);
    expect(holdsAPiece(error, secret), error).toEqual([]);
  });
});
