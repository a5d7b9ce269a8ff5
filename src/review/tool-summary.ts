/**
 * Tool calls and their results in a few words, the way a person would say them
 * ("Grep 'session' → 4 files"). Pure; reads the engine's tool output formats.
 */

/** Summaries quote at most this many characters of an input (a pattern, a path). */
export const INPUT_QUOTE_MAX_CHARS = 120;
/** Refusal and feedback details are cut to this many characters. */
export const DETAIL_MAX_CHARS = 400;

/**
 * One line naming a tool call the way a person would say it.
 *
 * @example
 * summariseToolCall("Read", { file_path: "src/app.ts", offset: 1, limit: 80 }) // "Read src/app.ts (lines 1–80)"
 * summariseToolCall("Grep", { pattern: "session" })                          // "Grep 'session'"
 */
export function summariseToolCall(name: string, input: Record<string, unknown>): string {
  const str = (key: string): string | undefined => {
    const v = input[key];
    return typeof v === "string" && v !== "" ? cut(v, INPUT_QUOTE_MAX_CHARS) : undefined;
  };
  const num = (key: string): number | undefined => {
    const v = input[key];
    return typeof v === "number" && Number.isFinite(v) ? v : undefined;
  };
  const where = (): string => (str("path") ? ` in ${str("path")}` : "");
  switch (name) {
    case "Read": {
      const offset = num("offset");
      const limit = num("limit");
      const from = offset ?? 1;
      const lines =
        limit !== undefined
          ? ` (lines ${from}–${from + limit - 1})`
          : offset !== undefined
            ? ` (from line ${from})`
            : "";
      return `Read ${str("file_path") ?? str("path") ?? "a file"}${lines}`;
    }
    case "Grep": {
      const glob = str("glob") ? ` (${str("glob")})` : "";
      return `Grep '${str("pattern") ?? ""}'${where()}${glob}`;
    }
    case "Glob":
      return `Glob '${str("pattern") ?? ""}'${where()}`;
    case "LS":
      return `LS ${str("path") ?? "."}`;
    case "Write": {
      const content = input.content;
      const lines = typeof content === "string" ? ` (${plural(lineCount(content), "line")})` : "";
      return `Write ${str("file_path") ?? "a file"}${lines}`;
    }
    case "Edit":
      return `Edit ${str("file_path") ?? "a file"}`;
    case "AskUserQuestion": {
      const questions = Array.isArray(input.questions) ? input.questions : [];
      const texts = questions
        .map((q) => (q && typeof q === "object" && "question" in q ? String(q.question) : ""))
        .filter((t) => t !== "");
      return texts.length > 0 ? `Asked: ${cut(texts.join(" · "), 300)}` : "Asked a question";
    }
    case "ExitPlanMode":
      return "Presented the plan for review";
    default:
      return `${name} ${cut(JSON.stringify(input), INPUT_QUOTE_MAX_CHARS)}`;
  }
}

/**
 * The outcome of a successful tool call in a few words ("4 files", "80 lines"), or "" when a
 * count would say nothing. Reads the engine's tool output formats (Grep's "Found N files",
 * Read's numbered lines, Glob and LS listings with their "(Showing …)" notes).
 *
 * @example
 * summariseToolResult("Grep", "Found 4 files\nsrc/a.ts\nsrc/b.ts\nsrc/c.ts\nsrc/d.ts") // "4 files"
 */
export function summariseToolResult(name: string, text: string): string {
  const trimmed = text.trim();
  const rows = trimmed.split("\n").filter((l) => l.trim() !== "" && !/^[([]/.test(l.trim()));
  switch (name) {
    case "Grep": {
      if (/^No (matches|files) found/i.test(trimmed)) return "no matches";
      const counted = /Found (\d+) matching lines? in (\d+) files?/.exec(trimmed);
      if (counted) {
        return `${plural(Number(counted[1]), "matching line")} in ${plural(Number(counted[2]), "file")}`;
      }
      const files = /^Found (\d+) files?/.exec(trimmed);
      if (files) return plural(Number(files[1]), "file");
      const hits = rows.filter((l) => /^.+?:\d+:/.test(l)).length;
      return plural(hits || rows.length, "matching line");
    }
    case "Glob": {
      if (/^No files found/i.test(trimmed)) return "no files";
      const total = /of (\d+) files/.exec(trimmed);
      return plural(total ? Number(total[1]) : rows.length, "file");
    }
    case "LS": {
      const total = /of (\d+) entries/.exec(trimmed);
      // The first row names the folder itself.
      const n = total ? Number(total[1]) : Math.max(0, rows.length - 1);
      return `${n} ${n === 1 ? "entry" : "entries"}`;
    }
    case "Read": {
      const numbered = trimmed.split("\n").filter((l) => /^\s*\d+\t/.test(l)).length;
      return numbered > 0 ? plural(numbered, "line") : cut(firstLine(text), INPUT_QUOTE_MAX_CHARS);
    }
    case "AskUserQuestion":
      // The answers themselves come from the event's `answers` record (transcript.ts).
      return cut(firstLine(text), DETAIL_MAX_CHARS);
    case "Write":
    case "Edit":
      return "";
    default:
      return cut(firstLine(text), INPUT_QUOTE_MAX_CHARS);
  }
}

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

export function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

export function firstLine(text: string): string {
  return text.trim().split("\n", 1)[0] ?? "";
}

export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
