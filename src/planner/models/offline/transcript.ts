import { toolResultText } from "../../../protocol/index.ts";
import { isReminderText } from "../../plan-mode/prompts.ts";
import type { ModelMessage, UserInput } from "../types.ts";

/**
 * What the offline planner has learned so far, read back from the conversation: its own tool
 * calls (recognised by their ids) and their results, the task, the user's answers, rejections
 * and later messages. The planner keeps no state of its own — the conversation is the state,
 * which is why a restarted session plans exactly as an uninterrupted one would. What the user
 * answered and decided comes as data (`ModelRequest.inputs`); only its own tools' output is
 * read as text.
 */

/** Tool-call ids the offline planner issues: `toolu_offline_<call>_<kind>_<detail>`. */
export const OFFLINE_ID_PREFIX = "toolu_offline_";

export type CallKind =
  | "ls"
  | "manifest"
  | "probe"
  | "named"
  | "message"
  | "area"
  | "grep"
  | "glob"
  | "defs"
  | "hint"
  | "read"
  | "callers"
  | "pairs"
  | "siblings"
  | "write"
  | "ask"
  | "exit";

const CALL_KINDS: ReadonlySet<string> = new Set<CallKind>([
  "ls",
  "manifest",
  "probe",
  "named",
  "message",
  "area",
  "grep",
  "glob",
  "defs",
  "hint",
  "read",
  "callers",
  "pairs",
  "siblings",
  "write",
  "ask",
  "exit",
]);

export interface CallRecord {
  id: string;
  kind: CallKind | null;
  /** The term of a grep/glob search; the terms (joined by ".") of a definitions search. */
  term: string | null;
  name: string;
  input: Record<string, unknown>;
  result: { text: string; isError: boolean } | null;
  /** Index of the assistant message that made the call. */
  message: number;
}

export interface Rejection {
  feedback: string;
  comments: readonly { quote: string; text: string }[];
}

/** A piece of user input, in conversation order. */
export type Input =
  | { kind: "text"; text: string; message: number }
  | { kind: "answer"; answers: Readonly<Record<string, string>>; afk: boolean; message: number }
  | { kind: "rejection"; rejection: Rejection; message: number };

export interface Transcript {
  task: string;
  calls: CallRecord[];
  inputs: Input[];
  /** Assistant messages so far (the next call's serial number). */
  serial: number;
  teleported: boolean;
}

/**
 * Reads the conversation, with the user's answers to tool calls from `answered` (by tool_use_id).
 *
 * @example
 * const t = readTranscript(request.messages, request.inputs);
 * t.task // the first thing the user typed
 */
export function readTranscript(
  messages: readonly ModelMessage[],
  answered: ReadonlyMap<string, UserInput>,
): Transcript {
  const calls = new Map<string, CallRecord>();
  const inputs: Input[] = [];
  let task: string | null = null;
  let serial = 0;
  let teleported = false;

  messages.forEach((m, index) => {
    if (m.role === "assistant") {
      serial++;
      for (const block of m.content) {
        if (block.type !== "tool_use") continue;
        const parsed = parseId(block.id);
        calls.set(block.id, {
          id: block.id,
          ...parsed,
          name: block.name,
          input: block.input,
          result: null,
          message: index,
        });
      }
      return;
    }
    const texts: string[] = [];
    for (const block of m.content) {
      if (block.type === "text") {
        if (!isReminderText(block.text) && block.text.trim() !== "") texts.push(block.text.trim());
        continue;
      }
      const call = calls.get(block.tool_use_id);
      if (call)
        call.result = { text: toolResultText(block.content), isError: block.is_error === true };
      const input = answered.get(block.tool_use_id);
      if (input?.kind === "decision") {
        if (input.decision === "teleport") teleported = true;
        else if (input.decision === "reject") {
          const rejection = { feedback: input.feedback, comments: input.comments };
          inputs.push({ kind: "rejection", rejection, message: index });
        }
      } else if (input?.kind === "answers") {
        inputs.push({
          kind: "answer",
          answers: input.answers,
          afk: input.by === "afk",
          message: index,
        });
      }
    }
    for (const text of texts) {
      if (task === null) task = text;
      else inputs.push({ kind: "text", text, message: index });
    }
  });
  return { task: task ?? "", calls: [...calls.values()], inputs, serial, teleported };
}

function parseId(id: string): { kind: CallKind | null; term: string | null } {
  if (!id.startsWith(OFFLINE_ID_PREFIX)) return { kind: null, term: null };
  const m = /^toolu_offline_\d+_([a-z]+)_(.*)$/.exec(id);
  const name = m?.[1] ?? "";
  if (!CALL_KINDS.has(name)) return { kind: null, term: null };
  const kind = name as CallKind;
  const detail = m?.[2] ?? "";
  return {
    kind,
    term:
      kind === "grep" || kind === "glob" || kind === "defs" || kind === "message" ? detail : null,
  };
}

/**
 * The text of a Read result without its `cat -n` numbering, as [line number, text] pairs.
 *
 * @example
 * readLines("     1\tfoo") // [[1, "foo"]]
 */
export function readLines(result: string): [number, string][] {
  const out: [number, string][] = [];
  for (const line of result.split("\n")) {
    const m = /^\s*(\d+)\t(.*)$/.exec(line);
    if (m) out.push([Number(m[1]), m[2]!]);
  }
  return out;
}

/**
 * Paths listed by a Glob result, and the total when it was capped.
 *
 * @example
 * globPaths("a.ts\nb.ts") // { paths: ["a.ts", "b.ts"], total: 2 }
 */
export function globPaths(result: string): { paths: string[]; total: number } {
  if (result.startsWith("No files found")) return { paths: [], total: 0 };
  const paths: string[] = [];
  let total = -1;
  for (const line of result.split("\n")) {
    const capped = /^\(Showing the first \d+ of (\d+) files/.exec(line);
    if (capped) total = Number(capped[1]);
    else if (line !== "" && !line.startsWith("(")) paths.push(line);
  }
  return { paths, total: total === -1 ? paths.length : total };
}

/**
 * `path:count` rows of a Grep count result, and whether it was capped.
 *
 * @example
 * grepCounts("src/a.ts:3") // { hits: Map { "src/a.ts" => 3 }, truncated: false }
 */
export function grepCounts(result: string): { hits: Map<string, number>; truncated: boolean } {
  const hits = new Map<string, number>();
  let truncated = false;
  for (const line of result.split("\n")) {
    if (line.startsWith("(")) {
      // Cut at the entry cap, or at the scan's limit: either way the term's hits are partial.
      if (/showing the first|reached its (?:time|work) limit/.test(line)) truncated = true;
      continue;
    }
    const colon = line.lastIndexOf(":");
    if (colon <= 0) continue;
    const count = Number(line.slice(colon + 1));
    if (Number.isInteger(count) && count > 0) hits.set(line.slice(0, colon), count);
  }
  return { hits, truncated };
}

/** One row of a Grep content result. */
export interface GrepLine {
  path: string;
  line: number;
  text: string;
}

/**
 * The `path:line:text` rows of a Grep content result, and whether it was cut short.
 *
 * @example
 * grepLines("src/a.ts:3:export function a() {") // { lines: [{ path: "src/a.ts", line: 3, text: "export function a() {" }], truncated: false }
 */
export function grepLines(result: string): { lines: GrepLine[]; truncated: boolean } {
  const lines: GrepLine[] = [];
  let truncated = false;
  for (const row of result.split("\n")) {
    if (row.startsWith("(")) {
      if (/Output cut|reached its (?:time|work) limit/.test(row)) truncated = true;
      continue;
    }
    const m = /^([^\n:]+):(\d+):(.*)$/.exec(row);
    if (m) lines.push({ path: m[1]!, line: Number(m[2]), text: m[3]! });
  }
  return { lines, truncated };
}

/**
 * Folders and files of an LS result.
 *
 * @example
 * lsEntries("/repo/\n  src/\n  README.md") // { dirs: ["src"], files: ["README.md"] }
 */
export function lsEntries(result: string): { dirs: string[]; files: string[] } {
  const dirs: string[] = [];
  const files: string[] = [];
  for (const line of result.split("\n").slice(1)) {
    if (!line.startsWith("  ")) continue;
    const name = line.slice(2);
    if (name.endsWith("/")) dirs.push(name.slice(0, -1));
    else files.push(name);
  }
  return { dirs, files };
}
