import { isGeneratedPath, pathKind } from "../repository/paths.ts";
import { modulePath, modulesNamed, resolveNamed } from "./names.ts";
import { type DropHow, type Instruction, type Reading, readFeedback, WHY } from "./reader.ts";
import { type FileKind, said, type Target } from "./targets.ts";

/**
 * Feedback as instructions over this repository's files. Pure. The reader (reader.ts) says
 * what the words ask; this module ties each target to files — a path to the file it names, a
 * name written as code to the one file that defines it (never to every file holding its
 * words), plain words after an explicit verb to the modules they name ("the cache and
 * language files") — and turns the verbs into the sets the ranking and the plan follow.
 *
 * It keeps the reader's promise: a file asked for (keep, also, only, belongs in, move to, use,
 * a test in) is never in `exclude`; when the same words both keep and drop one file, neither
 * happens and the words are reported as unread.
 */

/** What one input instructs, over files. */
export interface Instructions {
  /** Files to add, in the order named. */
  include: string[];
  /** Files to rule out. */
  exclude: string[];
  /** Files never to drop (also added when missing). */
  keep: string[];
  /** With "only": the files the lists must be, in the order named; null without "only". */
  only: string[] | null;
  /** Files named as already handling something: listed to check, not to change. */
  check: string[];
  /** Test files named for a new test ("add a test in F"), known ones. */
  tests: string[];
  /** Kinds of files to leave out and to add. */
  kinds: { drop: FileKind[]; add: FileKind[]; keep: FileKind[] };
  /** Paths named that the repository does not have (with a folder: perhaps new files). */
  unknown: string[];
  /** Bare file names several files have, and names several files define. */
  ambiguous: string[];
  /** Names written as code whose definitions are still to be looked up. */
  lookups: string[];
  /** Words not acted on, with why. */
  unread: { said: string; why: string }[];
  /** Why each file moved, in the reviewer's terms (for the revision notes). */
  reasons: Map<string, string>;
  /** Clauses that ask for something (for the words that ask for a migration). */
  asking: string;
}

/** Why a file was ruled out, by how the reviewer said it. */
const DROPPED: Record<DropHow, string> = {
  alone: "you asked to leave it alone",
  out: "you asked to leave it out",
  drop: "you asked to drop it",
  elsewhere: "you said the change is not there",
};

/** What resolution needs of the repository. */
export interface RepositoryView {
  known: ReadonlySet<string>;
  /**
   * The files that define a name written as code: undefined while its definitions are not
   * searched yet, empty when none does.
   */
  definers: (name: string) => readonly string[] | undefined;
}

/**
 * Reads one input and resolves it against the repository. `passage` holds the files a
 * comment's quoted passage is about ("drop this").
 *
 * @example
 * instructionsOf("leave the tests out; it belongs in src/flask/testing.py, not wrappers.py", repo)
 * // { include: ["src/flask/testing.py"], exclude: ["src/flask/wrappers.py"], kinds: { drop: ["tests"], … }, … }
 */
export function instructionsOf(
  text: string,
  repo: RepositoryView,
  passage: readonly string[] | null = null,
): Instructions {
  return resolveReading(readFeedback(text, passage !== null), repo, passage ?? []);
}

/** A reading's instructions over files. */
export function resolveReading(
  reading: Reading,
  repo: RepositoryView,
  passage: readonly string[] = [],
): Instructions {
  const out: Instructions = {
    include: [],
    exclude: [],
    keep: [],
    only: null,
    check: [],
    tests: [],
    kinds: { drop: [], add: [], keep: [] },
    unknown: [],
    ambiguous: [],
    lookups: [],
    unread: [...reading.unread],
    reasons: new Map(),
    asking: reading.asking.join("\n"),
  };
  /** Files each instruction asked for and ruled out, with how surely (explicit or by words). */
  const asked = new Map<string, { explicit: boolean; said: string; why: string }>();
  const ruled = new Map<string, { explicit: boolean; said: string; why: string }>();
  const mark = (
    to: Map<string, { explicit: boolean; said: string; why: string }>,
    path: string,
    explicit: boolean,
    i: Instruction,
    why: string,
  ) => {
    const known = to.get(path);
    if (known === undefined || (explicit && !known.explicit))
      to.set(path, { explicit, said: i.said, why });
  };
  const push = (list: string[], path: string) => {
    if (!list.includes(path)) list.push(path);
  };

  for (const i of reading.instructions) {
    const files = (targets: readonly Target[], creating: boolean) =>
      targets.flatMap((t) => filesOf(t, i, repo, passage, out, creating));
    const kinds = (targets: readonly Target[]) =>
      targets.flatMap((t) => (t.type === "kind" ? [t.kind] : []));
    switch (i.verb) {
      case "drop": {
        for (const f of files(i.targets, false))
          mark(ruled, f.path, f.explicit, i, DROPPED[i.how ?? "out"]);
        for (const kind of kinds(i.targets)) push(out.kinds.drop, kind);
        break;
      }
      case "keep":
      case "also":
      case "only": {
        const why =
          i.verb === "keep"
            ? "you asked to keep it"
            : i.verb === "only"
              ? "you said the change is only there"
              : "you asked for it";
        // Named in passing: the paths are asked for; a name written as code ("like
        // `json.loads` does") compares or explains — it is looked up, and pulls no file in
        // beyond the paths beside it.
        const found =
          i.passing === true ? passingFiles(i, files, out) : files(i.targets, i.verb !== "keep");
        for (const f of found) {
          mark(asked, f.path, f.explicit, i, why);
          if (i.verb === "keep") push(out.keep, f.path);
          else push(out.include, f.path);
        }
        if (i.verb === "only" && found.length > 0)
          out.only = [...(out.only ?? []), ...found.map((f) => f.path)];
        for (const kind of kinds(i.targets))
          push(i.verb === "also" ? out.kinds.add : out.kinds.keep, kind);
        // "Only the docs": the plan lists the files of the change, it cannot be one kind only.
        if (i.verb === "only" && found.length === 0 && kinds(i.targets).length > 0)
          out.unread.push({ said: i.said, why: "the plan cannot be limited to one kind of file" });
        break;
      }
      case "move":
      case "use": {
        for (const f of files(i.to, true)) {
          mark(asked, f.path, f.explicit, i, "you said the change goes there");
          push(out.include, f.path);
        }
        for (const t of i.targets) {
          const found = files([t], false);
          // What moves out of a file changes it too; a file used instead of is replaced.
          if (i.verb === "move")
            for (const f of found) {
              mark(asked, f.path, f.explicit, i, "you asked to move code out of it");
              push(out.include, f.path);
            }
          else if (t.type === "path")
            for (const f of found)
              mark(ruled, f.path, f.explicit, i, "you said to use another file instead");
        }
        break;
      }
      case "handled": {
        for (const f of files(i.to, false)) {
          const what = i.targets.map(said).join(", ");
          mark(asked, f.path, f.explicit, i, `you said it already handles ${what || "this"}`);
          if (pathKind(f.path) === "test") push(out.tests, f.path);
          else push(out.check, f.path);
        }
        if (kinds(i.targets).includes("tests")) push(out.kinds.keep, "tests");
        break;
      }
      case "test-in": {
        for (const f of files(i.to, true)) {
          mark(asked, f.path, f.explicit, i, "you asked for a test there");
          push(pathKind(f.path) === "test" ? out.tests : out.include, f.path);
        }
        push(out.kinds.keep, "tests");
        break;
      }
    }
    // Words that name no module of the repository were not acted on: say so.
    const words = i.targets.filter((t) => t.type === "words");
    if (words.length > 0 && words.length === i.targets.length && files(words, false).length === 0)
      out.unread.push({ said: i.said, why: "its words name no module of this repository" });
  }

  // One file both asked for and ruled out by the same words: the explicit one wins; when both
  // are explicit (or both by words), neither happens and the words are reported.
  for (const [path, no] of ruled) {
    const yes = asked.get(path);
    if (yes !== undefined && yes.explicit === no.explicit) {
      out.unread.push({ said: no.said, why: `it both keeps and drops \`${path}\`` });
      ruled.delete(path);
      asked.delete(path);
      for (const list of [out.include, out.keep, out.tests, out.check])
        list.splice(0, list.length, ...list.filter((p) => p !== path));
      if (out.only !== null) out.only = out.only.filter((p) => p !== path);
    } else if (yes?.explicit) ruled.delete(path);
  }
  for (const [path, no] of ruled) {
    if (asked.get(path)?.explicit === true) continue;
    push(out.exclude, path);
    out.reasons.set(path, no.why);
  }
  for (const [path, yes] of asked) if (!out.exclude.includes(path)) out.reasons.set(path, yes.why);
  for (const list of [out.include, out.keep, out.tests, out.check])
    list.splice(0, list.length, ...list.filter((p) => !out.exclude.includes(p)));
  if (out.only !== null) out.only = unique(out.only.filter((p) => !out.exclude.includes(p)));
  // A kind both left out and kept by the same words: neither.
  for (const kind of [...out.kinds.drop])
    if (out.kinds.add.includes(kind) || out.kinds.keep.includes(kind)) {
      out.kinds.drop = out.kinds.drop.filter((k) => k !== kind);
      out.kinds.add = out.kinds.add.filter((k) => k !== kind);
      out.unread.push({
        said: `the ${kind}`,
        why: `your words both keep and leave out the ${kind}`,
      });
    }
  out.unknown = unique(out.unknown);
  out.ambiguous = unique(out.ambiguous);
  out.lookups = unique(out.lookups);
  return out;
}

interface Resolved {
  path: string;
  /** Named (a path, a name, the commented passage) rather than by words. */
  explicit: boolean;
  /** Came from a path the reviewer wrote (not a name's defining file). */
  fromPath: boolean;
}

/** The files one target means; what it cannot resolve is recorded in `out`. */
function filesOf(
  t: Target,
  i: Instruction,
  repo: RepositoryView,
  passage: readonly string[],
  out: Instructions,
  creating: boolean,
): Resolved[] {
  switch (t.type) {
    case "path": {
      const siblings = [...i.targets, ...i.to].flatMap((x) =>
        x.type === "path" && x.text.includes("/") ? [x.text] : [],
      );
      const found = resolveNamed(t.text.replace(/^repo\//, ""), repo.known, siblings);
      if (found.kind === "one") return [{ path: found.path, explicit: true, fromPath: true }];
      if (found.kind === "many") out.ambiguous.push(t.text);
      else if (t.text.includes("/") && creating) out.unknown.push(t.text);
      else out.unread.push({ said: i.said, why: `\`${t.text}\` is no file of this repository` });
      return [];
    }
    case "symbol": {
      const module = modulePath(t.text, repo.known);
      if (module !== null) return [{ path: module, explicit: true, fromPath: false }];
      const name = t.text.split(".").pop()!;
      out.lookups.push(name);
      const definers = repo.definers(name);
      if (definers === undefined) return [];
      const owner = t.text.includes(".") ? t.text.split(".")[0]! : null;
      let candidates = [...definers].filter((p) => !isGeneratedPath(p));
      const sources = candidates.filter((p) => pathKind(p) === "source");
      if (sources.length > 0) candidates = sources;
      if (owner !== null && candidates.length > 1) {
        const owned = candidates.filter((p) => repo.definers(owner)?.includes(p));
        if (owned.length > 0) candidates = owned;
      }
      if (candidates.length === 1)
        return [{ path: candidates[0]!, explicit: true, fromPath: false }];
      if (candidates.length === 0)
        out.unread.push({ said: i.said, why: `no file of this repository defines \`${t.text}\`` });
      else out.ambiguous.push(t.text);
      return [];
    }
    case "passage":
      return passage.map((path) => ({ path, explicit: true, fromPath: true }));
    case "words":
      return modulesNamed(t.text, repo.known).map((path) => ({
        path,
        explicit: false,
        fromPath: true,
      }));
    case "kind":
      return [];
  }
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

export { WHY };

/** The files a clause names in passing: its paths, and a name's file only when a path named it too. */
function passingFiles(
  i: Instruction,
  files: (targets: readonly Target[], creating: boolean) => Resolved[],
  out: Instructions,
): Resolved[] {
  const paths = files(
    i.targets.filter((t) => t.type === "path"),
    false,
  );
  const said = out.unread.length;
  const names = i.targets.filter((t) => t.type === "symbol");
  const elsewhere = names.filter((t) =>
    files([t], false).some((f) => !paths.some((p) => p.path === f.path)),
  );
  // (A name no file defines was already reported as such.)
  if (
    out.unread.length === said &&
    (elsewhere.length > 0 || (names.length > 0 && paths.length === 0))
  )
    out.unread.push({ said: i.said, why: WHY.passing });
  return paths;
}
