import { createHash } from "node:crypto";
import { classifyPath } from "../task-rules.ts";

/**
 * Which dataset instances make issue tasks, what their gold is and what the planner is asked.
 * Pure: patches, issue texts and ids in, verdicts out; build.ts applies it to the dataset read
 * from its mirror. README.md beside the runner lists the same rules.
 */

/** A file a fix's patch touches, as its `diff --git` block says. */
export interface PatchFile {
  /** The path after the change (for a deleted file, the path it had). */
  path: string;
  /** The path before the change (differs from `path` only for a rename or copy). */
  oldPath: string;
  /** M modified, A added, D deleted, R renamed or copied. */
  status: "M" | "A" | "D" | "R";
}

/**
 * The files a unified git patch touches, in patch order. Paths come from the `---`/`+++`
 * lines where there are any (they end at the line's end, so spaces survive), else from the
 * `rename`/`copy` lines or the `diff --git` line itself (a mode change, a pure rename).
 *
 * @example
 * filesOfPatch("diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ …");
 * // [{ path: "src/a.ts", oldPath: "src/a.ts", status: "M" }]
 */
export function filesOfPatch(patch: string): PatchFile[] {
  const files: PatchFile[] = [];
  const blocks = patch
    .split(/^(?=diff --git )/m)
    .filter((block) => block.startsWith("diff --git "));
  for (const block of blocks) {
    const lines = block.split("\n");
    let oldPath: string | null = null;
    let newPath: string | null = null;
    let status: PatchFile["status"] = "M";
    for (const line of lines.slice(1)) {
      if (line.startsWith("@@")) break;
      if (line.startsWith("new file mode")) status = "A";
      else if (line.startsWith("deleted file mode")) status = "D";
      else if (/^(rename|copy) from /.test(line)) {
        status = "R";
        oldPath = unquote(line.replace(/^(rename|copy) from /, ""));
      } else if (/^(rename|copy) to /.test(line)) {
        status = "R";
        newPath = unquote(line.replace(/^(rename|copy) to /, ""));
      } else if (line.startsWith("--- ")) {
        const path = sidePath(line.slice(4), "a/");
        if (path !== null) oldPath = path;
      } else if (line.startsWith("+++ ")) {
        const path = sidePath(line.slice(4), "b/");
        if (path !== null) newPath = path;
      }
    }
    if (oldPath === null || newPath === null) {
      const fromHeader = headerPaths(lines[0]!);
      oldPath ??= status === "A" ? (newPath ?? fromHeader?.[1] ?? null) : (fromHeader?.[0] ?? null);
      newPath ??= status === "D" ? oldPath : (fromHeader?.[1] ?? null);
    }
    if (oldPath === null || newPath === null) continue;
    files.push({ path: newPath, oldPath, status });
  }
  return files;
}

/** `a/x/y.ts` (or `"a/x y.ts"`, with a trailing tab and timestamp) → `x/y.ts`; /dev/null → null. */
function sidePath(raw: string, prefix: "a/" | "b/"): string | null {
  const path = unquote(raw.replace(/\t.*$/, "").trimEnd());
  if (path === "/dev/null") return null;
  return path.startsWith(prefix) ? path.slice(2) : path;
}

/** The two paths of `diff --git a/X b/Y` when the line can be split unambiguously. */
function headerPaths(header: string): [string, string] | null {
  const rest = header.slice("diff --git ".length);
  // Same path on both sides (mode changes): split in the middle.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === " ") {
    const [a, b] = [rest.slice(0, half), rest.slice(half + 1)];
    if (a.startsWith("a/") && b.startsWith("b/") && a.slice(2) === b.slice(2)) {
      return [a.slice(2), b.slice(2)];
    }
  }
  const match = /^a\/(\S+) b\/(\S+)$/.exec(rest);
  return match ? [match[1]!, match[2]!] : null;
}

function unquote(path: string): string {
  if (!(path.startsWith('"') && path.endsWith('"'))) return path;
  return path.slice(1, -1).replace(/\\(["\\])/g, "$1");
}

/** A fix that changes more source files than this is not one place to find. */
export const MAX_GOLD_FILES = 4;

export type IssueGold =
  | { ok: true; gold: string[]; goldNew: string[] }
  | { ok: false; reason: string };

/**
 * The gold of an issue task: the non-test source files (task-rules.ts `classifyPath`) the fix
 * changed, sorted. Left out: fixes that change no source file or more than
 * {@link MAX_GOLD_FILES}, that rename a source file (no single right answer), or that only add
 * or delete files (nothing the planner could find in the tree was edited).
 *
 * @example
 * issueGold([{ path: "src/a.ts", oldPath: "src/a.ts", status: "M" },
 *            { path: "test/a.test.ts", oldPath: "test/a.test.ts", status: "M" }]);
 * // { ok: true, gold: ["src/a.ts"], goldNew: [] }
 */
export function issueGold(files: readonly PatchFile[]): IssueGold {
  const sources = files.filter(
    (f) => classifyPath(f.path) === "source" || classifyPath(f.oldPath) === "source",
  );
  if (sources.length === 0) return { ok: false, reason: "no source file changed" };
  if (sources.length > MAX_GOLD_FILES) {
    return { ok: false, reason: `more than ${MAX_GOLD_FILES} source files changed` };
  }
  if (sources.some((f) => f.status === "R")) return { ok: false, reason: "a source file renamed" };
  if (!sources.some((f) => f.status === "M")) {
    return { ok: false, reason: "no existing source file modified" };
  }
  return {
    ok: true,
    gold: sources.map((f) => f.path).sort(),
    goldNew: sources
      .filter((f) => f.status === "A")
      .map((f) => f.path)
      .sort(),
  };
}

/** The session API's limit on a prompt (CreateSessionSchema), in characters. */
export const MAX_PROMPT_CHARS = 100_000;

/** An issue as a dataset holds it. */
export interface IssueText {
  title: string;
  body: string | null;
}

/**
 * The prompt of an issue task: each issue's title, a blank line and its body, as a user would
 * paste it. HTML comments go (GitHub does not show them: they are the issue template's
 * instructions), line ends become `\n`, runs of blank lines one; the text is cut at the
 * session API's limit. Several issues (a fix that closes two) are joined by a blank line.
 *
 * @example
 * issuePrompt([{ title: "Crash on empty input", body: "<!-- template -->\r\nSteps: …" }]);
 * // "Crash on empty input\n\nSteps: …"
 */
export function issuePrompt(issues: readonly IssueText[]): string {
  return normaliseLines(
    issues
      .map((issue) => `${issue.title.trim()}\n\n${withoutHtmlComments(issue.body ?? "")}`)
      .join("\n\n"),
  );
}

/**
 * The prompt of a task whose dataset holds the issue as one text (SWE-bench's
 * `problem_statement`: the title, a line end, the body), normalised as {@link issuePrompt}.
 *
 * @example
 * statementPrompt("Crash on empty input\r\n<!-- template -->\r\n\r\n\r\nSteps: …");
 * // "Crash on empty input\n\nSteps: …"
 */
export function statementPrompt(statement: string): string {
  return normaliseLines(withoutHtmlComments(statement));
}

/** GitHub does not show HTML comments: they are the issue template's instructions. */
function withoutHtmlComments(text: string): string {
  return text.replace(/<!--[\s\S]*?(-->|$)/g, "");
}

/** Line ends become `\n`, trailing blanks and runs of blank lines go; cut at the API's limit. */
function normaliseLines(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
    .slice(0, MAX_PROMPT_CHARS);
}

/**
 * `count` of the items, chosen by the SHA-256 of their id (the smallest first): a fixed
 * pseudo-random sample that no reading of the items steered, and that keeps its other members
 * when one item leaves. Returned in the items' order.
 *
 * @example
 * sampleById([{ id: "a" }, { id: "b" }, { id: "c" }], 2).length; // 2
 */
export function sampleById<T extends { id: string }>(items: readonly T[], count: number): T[] {
  const key = (id: string) => createHash("sha256").update(id).digest("hex");
  const chosen = new Set(
    [...items]
      .sort((a, b) => (key(a.id) < key(b.id) ? -1 : 1))
      .slice(0, count)
      .map((item) => item.id),
  );
  return items.filter((item) => chosen.has(item.id));
}

/** The two parts of the issue task set: repositories tuned on, and repositories held out. */
export const SPLITS = ["tuning", "held-out"] as const;
export type Split = (typeof SPLITS)[number];
