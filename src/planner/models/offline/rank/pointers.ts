import { nameMatch } from "../repository/definitions.ts";
import type { Knowledge } from "../repository/knowledge.ts";
import { dirOf, isModuleFile, moduleName, pathKind } from "../repository/paths.ts";
import type { TaskEvidence } from "../task/evidence.ts";
import type { PathEvidence } from "../task/frames.ts";
import { splitIdentifier, stem } from "../task/terms.ts";

/**
 * Which repository files the task's text points at, resolved against the paths the searches
 * saw. Pure. A path written out in a frame or a link names one file; the more of its folders
 * match, the surer the match (`site-packages/flask/app.py` is `src/flask/app.py`); a bare name
 * that several files have (`conf.py`, `__init__.py`, `index.ts`) could be any of them and
 * counts for little. A quoted message points at the few files that hold it; `Config.from_file`
 * points at the file that defines both the class and the method.
 */

/** One thing of the task's text that points at a file. */
export interface Pointer {
  /** "traceback frame", "link", "named", "message", "defines `Config.from_file`". */
  what: string;
  /** How surely it names the file, before the kind factor (about 1–4). */
  weight: number;
  /** Files the same pointer could mean (a bare `conf.py` may be any of several). */
  among: number;
  /** The line it names, if any. */
  line: number | null;
  /** It says again what the file's path already says (the title names the module by its folders). */
  restatesPath?: boolean;
}

/** How surely each way of naming a path names the file (a pointer's weight). */
const VIA_WEIGHT: Record<PathEvidence["via"], number> = { link: 4, frame: 3, mention: 2.5 };
/** A path matched by its file name alone (no folder) is worth this share. */
const NAME_ONLY = 0.5;
/** A message held by more files than this says little about any of them. */
const MAX_MESSAGE_FILES = 6;
/** Weight of a quoted message's file. */
const MESSAGE_WEIGHT = 3;
/** Weight of a file that defines a qualified name's owner and its member. */
const MEMBER_WEIGHT = 3;
/** Weight of a module the title names with its kind ("the logger middleware"). */
const PHRASE_WEIGHT = 1.5;

/**
 * Every file the task points at, with the pointers.
 *
 * @example
 * pointedFiles(evidence, k).get("lib/dictBuilder/cover.c") // [{ what: "link", weight: 4, among: 1, line: 611 }]
 */
export function pointedFiles(e: TaskEvidence, k: Knowledge): Map<string, Pointer[]> {
  const out = new Map<string, Pointer[]>();
  const add = (path: string, p: Pointer) => {
    const list = out.get(path) ?? [];
    if (!list.some((x) => x.what === p.what && x.line === p.line)) list.push(p);
    out.set(path, list);
  };
  const known = [...k.known].sort();
  for (const p of e.paths) {
    const match = resolvePath(p.text, known);
    if (match === null) continue;
    const weight = VIA_WEIGHT[p.via] * (match.segments > 1 ? 1 : NAME_ONLY);
    const what = p.via === "frame" ? "traceback frame" : p.via === "link" ? "link" : "named";
    for (const path of match.paths)
      add(path, { what, weight, among: match.paths.length, line: p.line });
  }
  e.messages.forEach((message, i) => {
    const files = k.messages.get(i) ?? [];
    if (files.length === 0 || files.length > MAX_MESSAGE_FILES) return;
    for (const path of files)
      add(path, {
        what: `holds the message "${message}"`,
        weight: MESSAGE_WEIGHT,
        among: files.length,
        line: null,
      });
  });
  for (const q of e.qualified) {
    const owner = splitIdentifier(q.owner).join("");
    const member = splitIdentifier(q.member).join("");
    if (owner.length < 3 || member.length < 2) continue;
    const defining: string[] = [];
    for (const [path, defs] of k.defs) {
      // A class or type and a member of it (`Config.from_file`, `Interest::ERROR`); a module
      // path (`axum::response::Response`) names where a thing lives, not a member to change.
      const hasOwner = defs.some(
        (d) => (d.kind === "class" || d.kind === "type") && nameMatch(d.name, owner) === 2,
      );
      const hasMember = defs.some(
        (d) =>
          d.kind !== "class" &&
          d.kind !== "type" &&
          (d.name === q.member || nameMatch(d.name, member) === 2),
      );
      if (hasOwner && hasMember) defining.push(path);
    }
    for (const path of defining)
      add(path, {
        what: `defines \`${q.owner}.${q.member}\``,
        weight: MEMBER_WEIGHT,
        among: defining.length,
        line: null,
      });
  }
  // "the logger middleware", "the cookie helper": two words of the title that are a module's
  // name and a folder it sits in (`middleware/logger/index.ts`, `helper/cookie/index.ts`).
  if (e.phrases.length > 0)
    for (const path of known) {
      if (pathKind(path) !== "source") continue;
      const module = moduleName(path);
      const folders = dirOf(path).split("/");
      if (isModuleFile(path)) folders.pop();
      for (const [a, b] of e.phrases) {
        const named =
          (sameWord(module, a) && folders.some((f) => sameWord(f, b))) ||
          (sameWord(module, b) && folders.some((f) => sameWord(f, a)));
        if (named)
          add(path, {
            what: `the task names it: "${a} ${b}"`,
            weight: PHRASE_WEIGHT,
            among: 1,
            line: null,
            restatesPath: true,
          });
      }
    }
  return out;
}

/** A path segment and a task word are the same word (`middlewares` and `middleware`). */
function sameWord(segment: string, word: string): boolean {
  const a = splitIdentifier(segment).join("");
  return a === word || stem(a) === stem(word);
}

/**
 * The known paths a written path means: those ending with the most of its segments (at least
 * its file name), and how many segments matched.
 *
 * @example
 * resolvePath("/usr/lib/python3/site-packages/flask/app.py", ["src/flask/app.py"]) // { paths: ["src/flask/app.py"], segments: 2 }
 */
export function resolvePath(
  written: string,
  known: readonly string[],
): { paths: string[]; segments: number } | null {
  const clean = written
    .replace(/\\/g, "/")
    .replace(/^[A-Za-z]:\//, "")
    .replace(/^(?:\.{0,2}\/)+/, "");
  const parts = clean.split("/").filter((x) => x !== "" && x !== "." && x !== "..");
  if (parts.length === 0) return null;
  for (let n = parts.length; n >= 1; n--) {
    const suffix = parts.slice(-n).join("/");
    const paths = known.filter((p) => p === suffix || p.endsWith(`/${suffix}`));
    if (paths.length > 0) return { paths, segments: n };
  }
  return null;
}
