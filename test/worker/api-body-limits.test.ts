import { describe, expect, it } from "vitest";
import { z } from "zod";
import { bodyLimit, type JsonRoute, SLACK_BYTES } from "../../src/api/body-limits.ts";
import {
  asciiPatternMaxLength,
  JSON_BYTES_PER_TEXT_CHAR,
  jsonBytesAtMost,
} from "../../src/api/json-size.ts";
import {
  MAX_APPROVABLE_PLAN_CHARS,
  MAX_COMMENT_CHARS,
  MAX_COMMENTS,
  MAX_COMMENTS_TOTAL_CHARS,
  MISSING_QUERY_MAX_BLOBS,
  SuggestionBodySchema,
} from "../../src/protocol/index.ts";
import { OVERSIZED_BODY_DRAIN_BYTES } from "../../src/request-body.ts";
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

/**
 * Body limits per JSON route, sized to the route's schema (issue 30, finding 6). Every JSON
 * route used to read up to 4 MiB — also the comments route, open to the read-only share link,
 * whose schema needs ~140 KB. Each route now reads at most its own limit, counted as the body
 * arrives: a body over it is 413 `payload_too_large` naming the limit, and the largest body the
 * schema accepts (every field at its maximum, each character escaped to 6 bytes, pretty-printed)
 * is never refused for its size.
 */

const KIB = 1024;
/** A character JSON.stringify escapes to its longest form, `\u0001`: 6 bytes. */
const ESCAPED = "\u0001";

interface Route {
  name: JsonRoute;
  path: string;
  auth: { token: string } | { reviewKey: string };
}

/** Every JSON route, on a session with a pending plan (decision, comment) or question. */
async function routes(): Promise<Route[]> {
  const planned = await createDrivenSession();
  await openPlan(planned.id, "# Plan\n\nReuse the session cookie.\n");
  const asking = await createDrivenSession();
  await openQuestion(asking.id, ["Which database?"]);
  const viewKey = new URL(planned.share_url ?? "").searchParams.get("key") ?? "";
  return [
    // The worker tests allow the scripted planner: its limit applies to creation here.
    { name: "scripted_session", path: "/v1/sessions", auth: ALICE },
    { name: "message", path: `/v1/sessions/${asking.id}/messages`, auth: ALICE },
    { name: "decision", path: `/v1/sessions/${planned.id}/decision`, auth: ALICE },
    { name: "comment", path: `/v1/sessions/${planned.id}/comments`, auth: { reviewKey: viewKey } },
    { name: "blobs", path: "/v1/blobs/missing", auth: ALICE },
  ];
}

/** POSTs `body` as a stream with no Content-Length; counts what the worker pulled from it. */
async function postStreamed(route: Route, body: { bytes: number; endless?: boolean }) {
  const chunk = new TextEncoder().encode(" ".repeat(64 * KIB));
  let pulled = 0;
  // An endless body is still cut here, far past any limit, so a worker that reads on cannot
  // hang the test: it fails on the count instead. (When the worker lets go of a body, workerd
  // prints "Network connection lost" for the test's side of the pipe.)
  const stopAt = body.endless ? 64 * 1024 * KIB : body.bytes;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= stopAt) return controller.close();
      const piece = chunk.subarray(0, Math.min(chunk.byteLength, stopAt - pulled));
      pulled += piece.byteLength;
      controller.enqueue(piece);
    },
  });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if ("token" in route.auth) headers.authorization = `Bearer ${route.auth.token}`;
  else headers["x-review-key"] = route.auth.reviewKey;
  const res = await api.fetcher(
    new Request(`http://planport.test${route.path}`, {
      method: "POST",
      headers,
      body: stream,
      // @ts-expect-error: workerd needs the half-duplex hint for a streamed request body
      duplex: "half",
    }),
  );
  const answer = (await res.json()) as { error?: { code: string; message: string } };
  return { status: res.status, error: answer.error, pulled };
}

describe("each JSON route reads at most its own limit", () => {
  it("the limits follow the schemas: a comment needs ~140 KB, a decision ~3 MB, none the old 4 MiB each", () => {
    const comment = bodyLimit("comment").bytes;
    // Two texts of 10,000 characters at 6 bytes each, the names, quotes and whitespace, and slack.
    expect(comment).toBe(jsonBytesAtMost(SuggestionBodySchema) + SLACK_BYTES);
    expect(comment).toBeGreaterThan(2 * MAX_COMMENT_CHARS * JSON_BYTES_PER_TEXT_CHAR);
    expect(comment).toBeLessThan(200 * KIB);
    // A plan that can be approved, feedback, and comments of as many characters together.
    const decision = bodyLimit("decision").bytes;
    const decisionText = MAX_APPROVABLE_PLAN_CHARS + 100_000 + MAX_COMMENTS_TOTAL_CHARS;
    expect(decision).toBeGreaterThan(decisionText * JSON_BYTES_PER_TEXT_CHAR);
    expect(decision).toBeLessThan(decisionText * JSON_BYTES_PER_TEXT_CHAR + 64 * KIB);
    // 20,000 hex ids are ASCII: a byte a character.
    expect(bodyLimit("blobs").bytes).toBeLessThan(MISSING_QUERY_MAX_BLOBS * 64 + SLACK_BYTES);
    expect(bodyLimit("session").bytes).toBeLessThan(bodyLimit("scripted_session").bytes);
  });

  it("a schema with a part that can grow without end has no limit: the error names the part", () => {
    expect(() => jsonBytesAtMost(z.object({ note: z.string() }))).toThrow(
      /body\.note .*no maximum/,
    );
    expect(() => jsonBytesAtMost(z.object({ list: z.array(z.string().max(9)) }))).toThrow(
      /body\.list .*no maximum/,
    );
    expect(() => jsonBytesAtMost(z.record(z.string().max(9), z.string().max(9)))).toThrow(
      /no maximum number of members/,
    );
    expect(asciiPatternMaxLength("^[a-z0-9][a-z0-9_-]{0,31}$")).toBe(32);
    expect(asciiPatternMaxLength("^[0-9a-f]{40}$")).toBe(40);
    for (const open of ["^a+$", "^.{3}$", "^[^a]{3}$", "^(a|b){2}$", "^é{2}$"]) {
      expect(asciiPatternMaxLength(open), open).toBeNull();
    }
  });

  it("a body one byte over its route's limit is 413 payload_too_large naming the limit, as it streams", async () => {
    for (const route of await routes()) {
      const limit = bodyLimit(route.name).bytes;
      const over = await postStreamed(route, { bytes: limit + 1 });
      expect(over.status, route.name).toBe(413);
      expect(over.error?.code).toBe("payload_too_large");
      expect(over.error?.message).toContain(`${limit.toLocaleString("en-US")} bytes`);
      // At the limit the body is read and judged by its content: whitespace is not JSON.
      const at = await postStreamed(route, { bytes: limit });
      expect(at.status, route.name).toBe(400);
      expect(at.error?.code).toBe("invalid_json");
    }
  });

  it("a body that never ends is refused soon after the limit, never read to its end", async () => {
    for (const route of await routes()) {
      const limit = bodyLimit(route.name).bytes;
      const endless = await postStreamed(route, { bytes: 0, endless: true });
      expect(endless.status, route.name).toBe(413);
      expect(endless.error?.code).toBe("payload_too_large");
      // The limit, then at most the drain (and the stream's read-ahead) — never the 64 MiB.
      expect(endless.pulled, route.name).toBeLessThan(limit + OVERSIZED_BODY_DRAIN_BYTES + MIB);
    }
  });

  it("the largest body each schema accepts, every character escaped and pretty-printed, is never refused for its size", async () => {
    const [session, message, decision, comment, blobs] = await routes();
    const text = (chars: number) => ESCAPED.repeat(chars);
    const bodies: [Route | undefined, object][] = [
      [
        session,
        {
          prompt: `p${text(99_999)}`,
          title: `t${text(199)}`,
          instructions: text(20_000),
          seed_plan: text(MAX_APPROVABLE_PLAN_CHARS),
          group: "g".repeat(64),
          approvers: Array.from({ length: 20 }, (_, i) => `a${i}`.padEnd(32, "x")),
          ask_timeout_s: 86_400,
        },
      ],
      [message, { tool_use_id: QUESTION_CALL, answers: answersAtMost() }],
      [
        decision,
        {
          tool_use_id: PLAN_CALL,
          decision: "reject",
          plan: text(MAX_APPROVABLE_PLAN_CHARS),
          feedback: text(100_000),
          comments: Array.from({ length: MAX_COMMENTS }, () => ({
            quote: text(MAX_COMMENTS_TOTAL_CHARS / MAX_COMMENTS / 2),
            text: `n${text(MAX_COMMENTS_TOTAL_CHARS / MAX_COMMENTS / 2 - 1)}`,
          })),
        },
      ],
      [comment, { quote: text(MAX_COMMENT_CHARS), text: `n${text(MAX_COMMENT_CHARS - 1)}` }],
      [blobs, { blobs: Array.from({ length: MISSING_QUERY_MAX_BLOBS }, () => "f".repeat(40)) }],
    ];
    for (const [route, json] of bodies) {
      if (route === undefined) throw new Error("a route is missing");
      const body = JSON.stringify(json, null, 2);
      expect(new TextEncoder().encode(body).byteLength).toBeLessThanOrEqual(
        bodyLimit(route.name).bytes,
      );
      const res = await api.call("POST", route.path, route.auth, {
        body,
        headers: { "content-type": "application/json" },
      });
      expect(res.status, `${route.name}: ${res.status}`).toBeLessThan(413);
      if (res.status >= 400) expect(await errorCode(res), route.name).not.toBe("payload_too_large");
      else await res.body?.cancel();
    }
  });
});

describe("what the schemas now bound", () => {
  it("answers name at most 4 questions, an edited plan has at most 200,000 characters, comments as many together", async () => {
    const asking = await createDrivenSession();
    await openQuestion(asking.id, ["Which database?"]);
    const fiveAnswers = Object.fromEntries(
      Array.from({ length: 5 }, (_, i) => [`Question ${i}?`, "yes"]),
    );
    const answered = await api.call("POST", `/v1/sessions/${asking.id}/messages`, ALICE, {
      json: { tool_use_id: QUESTION_CALL, answers: fiveAnswers },
    });
    expect(answered.status).toBe(400);
    expect(await answered.text()).toContain("at most 4 questions");

    const planned = await createDrivenSession();
    await openPlan(planned.id, "# Plan\n");
    const decide = (body: object) =>
      api.call("POST", `/v1/sessions/${planned.id}/decision`, ALICE, {
        json: { tool_use_id: PLAN_CALL, ...body },
      });
    const longPlan = await decide({ decision: "teleport", plan: "x".repeat(200_001) });
    expect(longPlan.status).toBe(400);
    expect(await longPlan.text()).toContain("no longer plan can be approved");
    const chatty = await decide({
      decision: "reject",
      comments: Array.from({ length: 21 }, () => ({ quote: "q".repeat(9_999), text: "n" })),
    });
    expect(chatty.status).toBe(400);
    expect(await chatty.text()).toContain(
      `${MAX_COMMENTS_TOTAL_CHARS} characters of quotes and notes together`,
    );
  });
});

const MIB = 1024 * KIB;

/** Four answers, each question and answer at its longest, every character escaped. */
function answersAtMost(): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: 4 }, (_, i) => [`${i}${ESCAPED.repeat(1_999)}`, ESCAPED.repeat(10_000)]),
  );
}
