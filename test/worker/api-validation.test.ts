import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodyLimit } from "../../src/api/body-limits.ts";
import { MAX_JSON_VALUES } from "../../src/api/validate.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  errorCode,
  openPlan,
  openQuestion,
  PLAN_CALL,
  QUESTION_CALL,
} from "../support/worker/sessions.ts";

/** Asserts a 4xx with the CONTRACT error body and the given code. */
async function expectError(res: Response, status: number, code: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(await errorCode(res)).toBe(code);
}

describe("malformed bodies are 400 with a code, never a 500", () => {
  it("refuses invalid JSON, an empty body and a non-JSON content type on every JSON route", async () => {
    const session = await createDrivenSession();
    const paths = [
      "/v1/sessions",
      `/v1/sessions/${session.id}/messages`,
      `/v1/sessions/${session.id}/decision`,
    ];
    for (const path of paths) {
      await expectError(
        await api.call("POST", path, ALICE, {
          body: "{not json",
          headers: { "content-type": "application/json" },
        }),
        400,
        "invalid_json",
      );
      await expectError(
        await api.call("POST", path, ALICE, {
          body: "",
          headers: { "content-type": "application/json" },
        }),
        400,
        "invalid_json",
      );
      await expectError(
        await api.call("POST", path, ALICE, {
          body: '{"prompt":"x"}',
          headers: { "content-type": "text/plain" },
        }),
        400,
        "invalid_body",
      );
      await expectError(
        await api.call("POST", path, ALICE, { body: '{"prompt":"x"}' }),
        400,
        "invalid_body",
      );
      for (const json of [null, [], "text", 42]) {
        await expectError(await api.call("POST", path, ALICE, { json }), 400, "invalid_body");
      }
    }
  });

  it("names the field that is wrong in a create request", async () => {
    const cases: [unknown, string][] = [
      [{}, "prompt"],
      [{ prompt: "   " }, "prompt"],
      [{ prompt: 7 }, "prompt"],
      [{ prompt: "x", snapshot_id: "abc" }, "snapshot_id"],
      [{ prompt: "x", planner: "gpt-9" }, "planner"],
      [{ prompt: "x", permission_mode: "bypassPermissions" }, "permission_mode"],
      [{ prompt: "x", ask_timeout_s: 0 }, "ask_timeout_s"],
      [{ prompt: "x", ask_timeout_s: 1.5 }, "ask_timeout_s"],
      [{ prompt: "x", title: "" }, "title"],
    ];
    for (const [json, field] of cases) {
      const res = await api.call("POST", "/v1/sessions", ALICE, { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("invalid_body");
      expect(body.error.message).toContain(field);
    }
  });

  it("refuses JSON nested deeper than the limit with invalid_json, on every JSON route", async () => {
    const session = await createDrivenSession();
    const deep = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
    const bodies = [
      `{"prompt":"x","title":"t","extra":${deep(5_000)}}`,
      `{"prompt":"x","planner":"scripted","script":[{"content":[{"type":"tool_use","name":"Read","input":{"a":${deep(5_000)}}}]}]}`,
      `{"prompt":"x","extra":${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}}`,
    ];
    for (const path of [
      "/v1/sessions",
      `/v1/sessions/${session.id}/messages`,
      `/v1/sessions/${session.id}/decision`,
    ]) {
      for (const body of bodies) {
        const res = await api.call("POST", path, ALICE, {
          body,
          headers: { "content-type": "application/json" },
        });
        await expectError(res, 400, "invalid_json");
      }
    }
    // Brackets inside strings are text, not nesting.
    const res = await api.call("POST", "/v1/sessions", ALICE, {
      body: JSON.stringify({ prompt: `${"[".repeat(5_000)} plan it` }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(201);
  });

  it("refuses a body of more values than any request holds (4 MiB of {}) with 413 before parsing it, on every JSON route", async () => {
    // Over the size limit of every route but a scripted creation: 413 either way.
    const session = await createDrivenSession();
    // 1.3 million empty objects: ~60 MiB of heap had JSON.parse built them (issue 22).
    const objects = `{"blobs":[${Array(1_300_000).fill("{}").join(",")}]}`;
    expect(objects.length).toBeLessThan(bodyLimit("scripted_session").bytes);
    for (const path of [
      "/v1/blobs/missing",
      "/v1/sessions",
      `/v1/sessions/${session.id}/messages`,
      `/v1/sessions/${session.id}/decision`,
    ]) {
      const res = await api.call("POST", path, ALICE, {
        body: objects,
        headers: { "content-type": "application/json" },
      });
      await expectError(res, 413, "payload_too_large");
    }
    // At the limit (object, name, list and strings) the body is parsed and judged by its shape;
    // what is inside strings is text, not values. (3.5 MB: only a scripted creation takes it.)
    const under = `{"blobs":[${Array(MAX_JSON_VALUES - 3)
      .fill('"{},{},[1,2]"')
      .join(",")}]}`;
    expect(under.length).toBeLessThan(bodyLimit("scripted_session").bytes);
    const res = await api.call("POST", "/v1/sessions", ALICE, {
      body: under,
      headers: { "content-type": "application/json" },
    });
    await expectError(res, 400, "invalid_body");
  });

  it("refuses a planner this server does not offer with planner_unavailable", async () => {
    for (const planner of ["anthropic", "openai", "workers-ai"]) {
      await expectError(
        await api.call("POST", "/v1/sessions", ALICE, { json: { prompt: "x", planner } }),
        400,
        "planner_unavailable",
      );
    }
  });

  it("refuses a script for a planner that does not replay one, and scripted without a script", async () => {
    await expectError(
      await api.call("POST", "/v1/sessions", ALICE, {
        json: {
          prompt: "x",
          planner: "offline",
          script: [{ content: [{ type: "text", text: "hi" }] }],
        },
      }),
      400,
      "invalid_body",
    );
    await expectError(
      await api.call("POST", "/v1/sessions", ALICE, { json: { prompt: "x", planner: "scripted" } }),
      400,
      "invalid_body",
    );
  });

  it("refuses a scripted replay too large to store with 413 payload_too_large", async () => {
    const turn = {
      content: Array.from({ length: 50 }, () => ({ type: "text", text: "t".repeat(700) })),
    };
    const script = Array.from({ length: 60 }, () => turn);
    await expectError(
      await api.call("POST", "/v1/sessions", ALICE, {
        json: { prompt: "x", planner: "scripted", script },
      }),
      413,
      "payload_too_large",
    );
  });

  it("refuses a snapshot the owner never uploaded with unknown_snapshot", async () => {
    await expectError(
      await api.call("POST", "/v1/sessions", ALICE, {
        json: { prompt: "x", snapshot_id: "0".repeat(64) },
      }),
      400,
      "unknown_snapshot",
    );
  });

  it("refuses malformed decisions", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, "# Plan\n");
    const path = `/v1/sessions/${session.id}/decision`;
    const cases: unknown[] = [
      {},
      { decision: "approve" },
      { tool_use_id: PLAN_CALL },
      { tool_use_id: PLAN_CALL, decision: "maybe" },
      { tool_use_id: "", decision: "approve" },
      { tool_use_id: PLAN_CALL, decision: "reject", comments: [{ quote: "", text: "x" }] },
      { tool_use_id: PLAN_CALL, decision: "reject", comments: "fix it" },
      { tool_use_id: PLAN_CALL, decision: "approve", permission_mode: "yolo" },
      { tool_use_id: PLAN_CALL, decision: "approve", plan: 5 },
    ];
    for (const json of cases) {
      const res = await api.call("POST", path, ALICE, { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(await errorCode(res)).toBe("invalid_body");
    }
    // Nothing was decided by any of them.
    expect((await api.getSession(ALICE, session.id)).phase).toBe("plan_ready");
  });

  it("refuses malformed messages, naming the field", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, ["Which database?"]);
    const path = `/v1/sessions/${session.id}/messages`;
    const cases: [unknown, string][] = [
      [{}, "tool_use_id"],
      [{ text: "" }, "text"],
      [{ text: 5 }, "text"],
      [{ text: "hi", extra: true }, "extra"],
      [{ tool_use_id: QUESTION_CALL }, "answers"],
      [{ tool_use_id: QUESTION_CALL, answers: { "Which database?": 3 } }, "answers"],
      [{ tool_use_id: QUESTION_CALL, answers: [] }, "answers"],
    ];
    for (const [json, field] of cases) {
      const res = await api.call("POST", path, ALICE, { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("invalid_body");
      expect(body.error.message).toContain(field);
    }
  });

  it("refuses an answer to a question that was not asked with unknown_question", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, ["Which database?"]);
    await expectError(
      await api.call("POST", `/v1/sessions/${session.id}/messages`, ALICE, {
        json: { tool_use_id: QUESTION_CALL, answers: { "Which cache?": "Redis" } },
      }),
      400,
      "unknown_question",
    );
  });
});

describe("query strings", () => {
  it("refuses bad list queries with invalid_query", async () => {
    for (const query of ["limit=0", "limit=101", "limit=abc", "limit=2.5", "before=yesterday"]) {
      await expectError(
        await api.call("GET", `/v1/sessions?${query}`, ALICE),
        400,
        "invalid_query",
      );
    }
  });

  it("refuses bad feed limits with invalid_query and a cursor that is not an event id with invalid_cursor", async () => {
    const session = await createDrivenSession();
    for (const query of ["limit=0", "limit=1001", "limit=-1", "limit=x"]) {
      await expectError(
        await api.call("GET", `/v1/sessions/${session.id}/events?${query}`, ALICE),
        400,
        "invalid_query",
      );
    }
    for (const cursor of [
      "5",
      "evt_1",
      "evt_000000000000000x",
      "ses_0000000000000000000000000",
      "x".repeat(65),
    ]) {
      const res = await api.call(
        "GET",
        `/v1/sessions/${session.id}/events?after_id=${cursor}`,
        ALICE,
      );
      expect(res.status, cursor).toBe(400);
      expect(["invalid_cursor", "invalid_query"]).toContain(await errorCode(res));
    }
  });
});

describe("arbitrary input", () => {
  it("never answers 5xx to random JSON bodies or query strings, and every 4xx has the error body", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, ["Which database?"]);
    const bodyRoutes = [
      "/v1/sessions",
      `/v1/sessions/${session.id}/messages`,
      `/v1/sessions/${session.id}/decision`,
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodyRoutes), fc.jsonValue(), async (path, json) => {
        const res = await api.call("POST", path, ALICE, { json });
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) await errorCode(res);
      }),
      { numRuns: 150 },
    );
    const queryRoutes = ["/v1/sessions", `/v1/sessions/${session.id}/events`];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...queryRoutes),
        fc.dictionary(
          fc.constantFrom("limit", "before", "after_id", "x"),
          fc.string({ maxLength: 30 }),
        ),
        async (path, query) => {
          const res = await api.call("GET", `${path}?${new URLSearchParams(query)}`, ALICE);
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400) await errorCode(res);
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe("unknown routes", () => {
  it("answers 404 not_found with the error body for unknown paths and methods", async () => {
    await expectError(await api.call("GET", "/v2/sessions", ALICE), 404, "not_found");
    await expectError(await api.call("DELETE", "/v1/sessions", ALICE), 404, "not_found");
    await expectError(
      await api.call("GET", "/v1/sessions/%E0%A4%A/events", ALICE),
      404,
      "not_found",
    );
  });
});
