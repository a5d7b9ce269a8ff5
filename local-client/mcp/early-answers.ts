/**
 * The first two answers of `planport mcp`, given before the MCP SDK has loaded (issue 32: an
 * agent such as Codex waits about 1 s for a server's tools). The build (scripts/build.ts) runs
 * the real server once and records its answers to `initialize` and `tools/list`
 * ({@link McpStartAnswers}); the built command sends those at once while it loads the SDK,
 * then hands every message, those two included, to the SDK server and drops the SDK's own
 * answers to requests already answered here (stdio.ts). Nothing here imports the SDK or zod.
 * Run from the sources (no build), there are no recorded answers and the SDK answers alone.
 */

/** What the build recorded from the real server. */
export interface McpStartAnswers {
  /** The protocol versions the SDK accepts, and the one it offers otherwise. */
  supportedVersions: string[];
  latestVersion: string;
  /** The `initialize` result (its `protocolVersion` is chosen per request). */
  initialize: Record<string, unknown>;
  /** The `tools/list` result. */
  toolsList: unknown;
}

declare const PLANPORT_MCP_START_ANSWERS: string | undefined;

/** The answers the build recorded, or null when running from the sources. */
export function recordedAnswers(): McpStartAnswers | null {
  return typeof PLANPORT_MCP_START_ANSWERS === "string"
    ? (JSON.parse(PLANPORT_MCP_START_ANSWERS) as McpStartAnswers)
    : null;
}

/** Where the early answering is: before `initialize`, after it, or done (the SDK answers). */
export type EarlyState = "start" | "initialized" | "done";

type Id = string | number;

/**
 * The answer to one line the client sent, if it can be given early, and the next state. Only
 * a first, well-formed `initialize` and the `tools/list` requests right after it (with
 * `notifications/initialized` between) are answered; any other message ends the early
 * answering, so everything after it is the SDK's alone.
 *
 * @example
 * earlyAnswer('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', answers, "initialized")
 * // → { state: "initialized", id: 1, line: '{"result":{"tools":[…]},"jsonrpc":"2.0","id":1}\n' }
 */
export function earlyAnswer(
  line: string,
  answers: McpStartAnswers,
  state: EarlyState,
): { state: EarlyState; id?: Id; line?: string } {
  if (state === "done") return { state };
  const message = parseRequest(line);
  if (message === null) return { state: "done" };
  if (state === "start" && message.method === "initialize" && message.id !== undefined) {
    const requested = initializeVersion(message.params);
    if (requested === null) return { state: "done" };
    const protocolVersion = answers.supportedVersions.includes(requested)
      ? requested
      : answers.latestVersion;
    return {
      state: "initialized",
      id: message.id,
      line: answerLine(message.id, { ...answers.initialize, protocolVersion }),
    };
  }
  if (state === "initialized" && message.method === "notifications/initialized") {
    return message.id === undefined ? { state } : { state: "done" };
  }
  if (state === "initialized" && message.method === "tools/list" && message.id !== undefined) {
    return { state, id: message.id, line: answerLine(message.id, answers.toolsList) };
  }
  return { state: "done" };
}

/** The line the SDK writes for a result (its key order, one line). */
function answerLine(id: Id, result: unknown): string {
  return `${JSON.stringify({ result, jsonrpc: "2.0", id })}\n`;
}

function parseRequest(line: string): { method: string; id?: Id; params?: unknown } | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const m = value as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
  if (m.jsonrpc !== "2.0" || typeof m.method !== "string") return null;
  if (m.id === undefined) return { method: m.method, params: m.params };
  if (typeof m.id === "string" || (typeof m.id === "number" && Number.isInteger(m.id))) {
    return { method: m.method, id: m.id, params: m.params };
  }
  return null;
}

/** The requested version of an `initialize` the SDK accepts as well-formed; null otherwise. */
function initializeVersion(params: unknown): string | null {
  if (typeof params !== "object" || params === null) return null;
  const p = params as { protocolVersion?: unknown; capabilities?: unknown; clientInfo?: unknown };
  const info = p.clientInfo as { name?: unknown; version?: unknown } | null | undefined;
  const wellFormed =
    typeof p.protocolVersion === "string" &&
    typeof p.capabilities === "object" &&
    p.capabilities !== null &&
    !Array.isArray(p.capabilities) &&
    typeof info === "object" &&
    info !== null &&
    typeof info.name === "string" &&
    typeof info.version === "string";
  return wellFormed ? (p.protocolVersion as string) : null;
}

/**
 * Whether an outgoing line is the SDK's answer to a request answered early (and so is not
 * sent again); it is then forgotten from `answered`.
 */
export function answeredAlready(line: string, answered: Set<Id>): boolean {
  if (answered.size === 0) return false;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null) return false;
  const m = value as { id?: unknown; method?: unknown };
  if (m.method !== undefined || (typeof m.id !== "string" && typeof m.id !== "number")) {
    return false;
  }
  return answered.delete(m.id);
}
