/**
 * What an issue's pasted output points at: traceback frames (their paths, lines and functions)
 * and the error messages worth a literal search. Pure; evidence.ts reads the rest of the task.
 */

/** A path the text names, and how. */
export interface PathEvidence {
  /** As written (`src/flask/config.py`, `cover.c`, `com/x/Parser.java`). */
  text: string;
  /** The line it names, when it does (a frame, a `#L611` link, `file.c:12`). */
  line: number | null;
  /** A traceback frame or a link to the repository is surer than a mention in prose. */
  via: "frame" | "link" | "mention";
}

/** Most messages searched literally. */
export const MAX_MESSAGES = 2;

/** Shortest message worth a literal search (characters). */
const MIN_MESSAGE_CHARS = 12;

/** Longest literal searched: the beginning of a message is what a source's format string keeps. */
const MAX_MESSAGE_CHARS = 60;

/**
 * Traceback frames: Python `File "x.py", line 3, in f`, Java `at a.b.C.m(C.java:12)`, Go
 * `/x/y.go:12`, Rust `src/x.rs:12:5`, JavaScript `at f (src/x.js:3:9)`, compilers
 * `include/x.h:12:5: error:` — their paths, lines and functions.
 */
export function readFrames(
  text: string,
  addPath: (p: PathEvidence) => void,
  addName: (name: string, qualifier: string | null) => void,
): void {
  for (const m of text.matchAll(/File "([^"\n]{1,300})", line (\d+)(?:, in ([\w<>.]+))?/g)) {
    addPath({ text: m[1]!, line: lineOf(m[2]), via: "frame" });
    if (m[3] && !m[3].startsWith("<")) addName(m[3], null);
  }
  for (const m of text.matchAll(
    /\bat\s+((?:[\w$]+\.)+)([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)/g,
  )) {
    const owner = m[1]!.slice(0, -1);
    const segments = owner.split(".");
    const cls = segments[segments.length - 1]!.replace(/\$.*$/, "");
    const pkg = segments.slice(0, -1).join("/");
    addPath({ text: pkg === "" ? m[3]! : `${pkg}/${m[3]!}`, line: lineOf(m[4]), via: "frame" });
    addName(cls, null);
    if (!m[2]!.startsWith("<")) addName(m[2]!, cls);
  }
  for (const m of text.matchAll(
    /(?:^|[\s(])((?:[\w.@+-]+\/)*[\w.@+-]+\.(?:go|rs|js|mjs|cjs|ts|tsx|jsx|py|rb|c|cc|cpp|cxx|h|hh|hpp|java|kt|cs|swift|php|ex|exs)):(\d+)(?::\d+)?/gm,
  ))
    addPath({ text: m[1]!, line: lineOf(m[2]), via: "frame" });
}

/**
 * Error messages a source file may hold: what follows `Error:`, `panicked at`, an exception's
 * name; cut at the first part a program fills in (a number, a quoted value, a path).
 */
export function readMessages(text: string): string[] {
  const out: string[] = [];
  const add = (raw: string) => {
    const cut = raw
      .split(/["'`{}[\]<>()]|\b\d|\s[/\\~]|:\s|\s-{1,2}\w|\s=\s/)[0]!
      .replace(/\s+/g, " ")
      .trim()
      .replace(/[.,;:]+$/, "");
    if (cut.length < MIN_MESSAGE_CHARS || !/[a-z]{3,}\s+[a-z]{2,}/i.test(cut)) return;
    const message = cut
      .slice(0, MAX_MESSAGE_CHARS)
      .replace(/\s\S*$/, (tail) => (cut.length > MAX_MESSAGE_CHARS ? "" : tail));
    if (!out.includes(message)) out.push(message);
  };
  for (const m of text.matchAll(/panicked at '([^'\n]{1,300})'/g)) add(m[1]!);
  for (const m of text.matchAll(/panicked at [^\n]*?:\d+:\d+:\n([^\n]{1,300})/g)) add(m[1]!);
  for (const m of text.matchAll(
    /(?:^|[\s.])(?:[A-Z]\w*(?:Error|Exception)|[Ee]rror|ERROR|[Ff]atal|FATAL|panic)(?:\[\w+\])?:[ \t]*\n?[ \t]*([A-Za-z][^\n]{0,299})/gm,
  ))
    add(m[1]!);
  return out;
}

export function lineOf(digits: string | undefined): number | null {
  if (digits === undefined) return null;
  const n = Number(digits);
  return Number.isInteger(n) && n > 0 ? n : null;
}

export function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
