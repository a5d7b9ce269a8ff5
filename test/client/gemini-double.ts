/**
 * TEST DOUBLE of the Gemini API (generativelanguage `v1beta`) — what Gemini CLI speaks through
 * @google/genai, pointed here by `GOOGLE_GEMINI_BASE_URL` — served over real HTTP by a Node
 * `http` server (provider-double.ts). It is not Google: it answers with responses a test
 * scripted (or a responder function computed), and it checks the request the way the real API
 * refuses a malformed one — an API key; `contents` a non-empty list of `user`/`model` turns
 * with parts; function declarations with valid names; and after a model turn that called
 * functions, a user turn answering each call with a `functionResponse` of the same name ("the
 * number of function response parts is equal to the number of function call parts"). A
 * violation answers 400 `INVALID_ARGUMENT`.
 *
 *   POST <url>/_double/<lane>/script      queue responses (the shapes of anthropic-double-types.ts)
 *   GET  <url>/_double/<lane>/requests    what was received
 *   POST <url>/t/<lane>/v1beta/models/<model>:generateContent          a JSON answer
 *   POST <url>/t/<lane>/v1beta/models/<model>:streamGenerateContent    the same as server-sent events
 *                                         (GOOGLE_GEMINI_BASE_URL = <url>/t/<lane>)
 *
 * A scripted body is a GenerateContentResponse (`{candidates: [{content: {role: "model",
 * parts}}], usageMetadata}`, see {@link candidateOf}); a streamed request gets it as several
 * chunks ({@link generateContentEvents}).
 */
import type { IncomingMessage } from "node:http";
import {
  type DoubleApi,
  doubleTokens,
  type ProviderDouble,
  prefixHashes,
  startProviderDouble,
} from "./provider-double.ts";

export type { RecordedRequest, ScriptedResponse } from "./anthropic-double-types.ts";

export type GeminiDouble = ProviderDouble;

/**
 * Starts the double on a free loopback port.
 *
 * @example
 * const double = await startGeminiDouble();
 * // GOOGLE_GEMINI_BASE_URL = `${double.url}/t/my-test`
 */
export function startGeminiDouble(): Promise<GeminiDouble> {
  return startProviderDouble(GEMINI_API);
}

/** One part of a model turn, as a test scripts it. */
export type ModelPart =
  | { text: string }
  | { functionCall: { name: string; args: Record<string, unknown>; id?: string } };

/**
 * A complete GenerateContentResponse with one candidate: what a test scripts.
 *
 * @example
 * candidateOf([{ functionCall: { name: "mcp_planport_plan", args: { task: "add OAuth" } } }])
 */
export function candidateOf(parts: ModelPart[], model = "gemini-double"): Record<string, unknown> {
  const output = doubleTokens(JSON.stringify(parts));
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: 1,
      candidatesTokenCount: output,
      totalTokenCount: 1 + output,
    },
    modelVersion: model,
  };
}

const GEMINI_API: DoubleApi = {
  path: /\/v1beta\/models\/[\w.-]+:(?:generateContent|streamGenerateContent)/,
  streamed: (url) => url.pathname.endsWith(":streamGenerateContent"),
  wireProblem: geminiWireProblem,
  error: (type, message) => ({
    error: {
      code: type === "not_found_error" ? 404 : type === "invalid_request_error" ? 400 : 500,
      message,
      status:
        type === "not_found_error"
          ? "NOT_FOUND"
          : type === "invalid_request_error"
            ? "INVALID_ARGUMENT"
            : "INTERNAL",
    },
  }),
  simulateUsage(cache, body, scripted) {
    const reply = scripted as { usageMetadata?: { candidatesTokenCount?: number } };
    const usage = geminiUsage(cache, body, reply.usageMetadata?.candidatesTokenCount ?? 1);
    return {
      body: {
        ...(scripted as object),
        usageMetadata: {
          promptTokenCount: usage.prompt_tokens,
          candidatesTokenCount: usage.candidates_tokens,
          cachedContentTokenCount: usage.cached_tokens,
          totalTokenCount: usage.prompt_tokens + usage.candidates_tokens,
        },
      },
      usage,
    };
  },
  eagerToolCall(body, scripted) {
    const b = body as {
      tools?: { functionDeclarations?: { name?: string }[] }[];
      toolConfig?: { functionCallingConfig?: { mode?: string } };
    };
    const reply = scripted as { candidates?: { content?: { parts?: object[] } }[] };
    if (b.toolConfig?.functionCallingConfig?.mode === "NONE") return null;
    const name = b.tools?.flatMap((t) => t.functionDeclarations ?? [])[0]?.name;
    if (name === undefined) return null;
    const parts = reply.candidates?.[0]?.content?.parts ?? [];
    if (parts.some((p) => "functionCall" in p)) return null;
    return { ...reply, ...candidateOf([{ functionCall: { name, args: {} } }]) };
  },
  streamEvents: generateContentEvents,
};

type Part = Record<string, unknown> & {
  functionCall?: { name?: unknown };
  functionResponse?: { name?: unknown };
};
type Content = { role?: unknown; parts?: unknown };

/** The fields of which a part holds exactly one (thought marks and signatures aside). */
const PART_DATA = [
  "text",
  "inlineData",
  "fileData",
  "functionCall",
  "functionResponse",
  "executableCode",
  "codeExecutionResult",
];

/** What the real API would refuse in this request, or null. */
export function geminiWireProblem(req: IncomingMessage, body: unknown): string | null {
  if (!String(req.headers["content-type"] ?? "").includes("application/json"))
    return "content-type must be application/json";
  const key =
    req.headers["x-goog-api-key"] ?? new URL(req.url ?? "/", "http://d").searchParams.get("key");
  if (typeof key !== "string" || key === "") return "an API key is required (x-goog-api-key)";
  if (typeof body !== "object" || body === null) return "body must be an object";
  const b = body as { contents?: unknown; tools?: unknown };
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) return "tools must be a list";
    for (const [i, tool] of (b.tools as { functionDeclarations?: unknown }[]).entries()) {
      if (tool.functionDeclarations === undefined) continue;
      if (!Array.isArray(tool.functionDeclarations))
        return `tools[${i}].function_declarations must be a list`;
      for (const [j, fn] of (tool.functionDeclarations as { name?: unknown }[]).entries()) {
        // The API's rule: a letter or underscore, then up to 63 of [a-zA-Z0-9_.:-].
        if (typeof fn.name !== "string" || !/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/.test(fn.name))
          return `tools[${i}].function_declarations[${j}].name: Invalid function name`;
      }
    }
  }
  if (!Array.isArray(b.contents) || b.contents.length === 0) return "contents is not specified";
  let owed: string[] = [];
  for (const [i, content] of (b.contents as Content[]).entries()) {
    if (content.role !== "user" && content.role !== "model")
      return `contents[${i}].role must be user or model`;
    if (!Array.isArray(content.parts) || content.parts.length === 0)
      return `contents[${i}].parts must not be empty`;
    const parts = content.parts as Part[];
    for (const [j, part] of parts.entries()) {
      const data = PART_DATA.filter((field) => part[field] !== undefined);
      if (data.length !== 1)
        return `contents[${i}].parts[${j}] must hold exactly one of ${PART_DATA.join(", ")}`;
    }
    const answers = parts.filter((p) => p.functionResponse !== undefined);
    if (owed.length > 0 || answers.length > 0) {
      const names = answers.map((p) => String(p.functionResponse?.name));
      if (content.role !== "user" || names.length !== owed.length)
        return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
      if ([...names].sort().join("\n") !== [...owed].sort().join("\n"))
        return `contents[${i}]: function responses ${names.join(", ")} do not answer the calls ${owed.join(", ")}`;
    }
    owed =
      content.role === "model"
        ? parts.filter((p) => p.functionCall !== undefined).map((p) => String(p.functionCall?.name))
        : [];
  }
  if (owed.length > 0) return `the function calls ${owed.join(", ")} have no function response`;
  return null;
}

/**
 * The usage the Gemini API reports, given the prefixes seen so far on the lane: the request is
 * its system instruction, tools, then contents; `cached_tokens` are those of the longest prefix
 * an earlier request shared (the API's implicit caching).
 */
export function geminiUsage(
  cache: Set<string>,
  body: unknown,
  candidatesTokens: number,
): { prompt_tokens: number; candidates_tokens: number; cached_tokens: number } {
  const b = body as { systemInstruction?: unknown; tools?: unknown[]; contents?: unknown[] };
  const blocks = [
    ...(b.systemInstruction === undefined ? [] : [`system:${JSON.stringify(b.systemInstruction)}`]),
    ...(b.tools ?? []).map((t) => `tool:${JSON.stringify(t)}`),
    ...(b.contents ?? []).map((c) => `content:${JSON.stringify(c)}`),
  ];
  const hashes = prefixHashes(blocks);
  const tokens = blocks.map(doubleTokens);
  let cachedBlocks = 0;
  for (let p = hashes.length - 1; p >= 0; p--) {
    if (cache.has(hashes[p] as string)) {
      cachedBlocks = p + 1;
      break;
    }
  }
  for (const h of hashes) cache.add(h);
  const sum = (n: number) => tokens.slice(0, n).reduce((a, t) => a + t, 0);
  return {
    prompt_tokens: sum(blocks.length),
    candidates_tokens: candidatesTokens,
    cached_tokens: sum(cachedBlocks),
  };
}

/**
 * A GenerateContentResponse as the server-sent events `streamGenerateContent?alt=sse` sends:
 * one `data:` chunk per part (a text part in two halves), each a response of its own with a
 * candidate holding just that part; the last chunk carries the finish reason and the usage.
 *
 * @example
 * generateContentEvents(candidateOf([{ text: "hi" }]))
 * // → 'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"h"}]},"index":0}]}\r\n\r\n…'
 */
export function generateContentEvents(reply: unknown): string {
  const r = reply as {
    candidates?: { content?: { role?: string; parts?: Part[] }; finishReason?: string }[];
    usageMetadata?: unknown;
    modelVersion?: string;
  };
  const candidate = r.candidates?.[0];
  const pieces: Part[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (typeof part.text === "string" && part.text.length > 1) {
      const half = Math.ceil(part.text.length / 2);
      pieces.push(
        { ...part, text: part.text.slice(0, half) },
        { ...part, text: part.text.slice(half) },
      );
    } else {
      pieces.push(part);
    }
  }
  const chunk = (parts: Part[], last: boolean) => ({
    candidates: [
      {
        content: { role: "model", parts },
        index: 0,
        ...(last ? { finishReason: candidate?.finishReason ?? "STOP" } : {}),
      },
    ],
    ...(last ? { usageMetadata: r.usageMetadata } : {}),
    modelVersion: r.modelVersion ?? "gemini-double",
  });
  const chunks =
    pieces.length === 0
      ? [chunk([], true)]
      : pieces.map((part, i) => chunk([part], i === pieces.length - 1));
  return chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("");
}
