import { adherenceSentence, type PlanAdherence, planAdherence } from "../protocol/index.ts";
import { html, type SafeHtml } from "./html.ts";
import { DIFF_MAX_LINES } from "./limits.ts";

/**
 * The remote execution's changes on the page, server-rendered: the unified diff cut into one
 * section per file (each with an anchor, `#change-1`, …), and how the changed files compare
 * with the files the approved plan named ("3 files changed as planned, 1 not in the plan:
 * src/x.ts", each unplanned file a link to its section). Pure apart from rendering.
 */

/** One file's part of a unified diff. */
export interface FileSection {
  /** The file's path (the new side; the old side for a deletion). */
  path: string;
  /** The section's lines, its `diff --git` header first. */
  lines: string[];
}

/**
 * Cuts a unified diff (as `GET …/changes` answers it) into per-file sections. The path is read
 * from the `+++ b/…` line (`--- a/…` for a deletion), with git's C-style quoting undone.
 *
 * @example
 * fileSections("diff --git a/x.ts b/x.ts\n--- a/x.ts\n+++ b/x.ts\n@@ -1 +1 @@\n-a\n+b\n")
 * // [{ path: "x.ts", lines: ["diff --git a/x.ts b/x.ts", "--- a/x.ts", "+++ b/x.ts", "@@ -1 +1 @@", "-a", "+b"] }]
 */
export function fileSections(diff: string): FileSection[] {
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const sections: FileSection[] = [];
  for (const line of lines) {
    if (line.startsWith("diff --git ") || sections.length === 0) {
      sections.push({ path: "", lines: [] });
    }
    sections.at(-1)!.lines.push(line);
  }
  for (const section of sections) section.path = sectionPath(section.lines);
  return sections.filter((s) => s.path !== "");
}

function sectionPath(lines: readonly string[]): string {
  let oldPath = "";
  for (const line of lines) {
    if (line.startsWith("@@")) break;
    const side = /^(---|\+\+\+) (.*)$/.exec(line);
    if (!side) continue;
    const name = unquote(side[2] ?? "");
    if (name === "/dev/null") continue;
    const path = name.replace(/^[ab]\//, "");
    if (side[1] === "+++") return path;
    oldPath = path;
  }
  if (oldPath !== "") return oldPath;
  const header = /^diff --git a\/(.*) b\/(.*)$/.exec(lines[0] ?? "");
  return header?.[2] ?? "";
}

/** Git's C-style quoted name (`"b/caf\303\251.ts"`) as text; other names unchanged. */
function unquote(name: string): string {
  if (!(name.startsWith('"') && name.endsWith('"') && name.length >= 2)) return name;
  const bytes: number[] = [];
  const body = name.slice(1, -1);
  const simple: Record<string, number> = {
    n: 10,
    t: 9,
    '"': 34,
    "\\": 92,
    a: 7,
    b: 8,
    f: 12,
    r: 13,
    v: 11,
  };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== "\\") {
      bytes.push(...new TextEncoder().encode(ch));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else {
      const next = body[i + 1] ?? "";
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** The changes as the outcome panel shows them: the adherence and the diff, by file. */
export interface ChangesView {
  sections: FileSection[];
  adherence: PlanAdherence;
  sentence: string;
}

/**
 * The changes view of a diff against the approved plan's text.
 *
 * @example
 * changesView(diff, "Edit `src/a.ts`.").sentence // "1 file changed as planned, none outside the plan"
 */
export function changesView(diff: string, plan: string): ChangesView {
  const sections = fileSections(diff);
  const adherence = planAdherence(
    plan,
    sections.map((s) => s.path),
  );
  return { sections, adherence, sentence: adherenceSentence(adherence, Number.POSITIVE_INFINITY) };
}

function lineClass(line: string): string {
  if (line.startsWith("diff --git") || line.startsWith("+++ ") || line.startsWith("--- "))
    return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-context";
}

/**
 * The adherence line and the diff by file, each file an anchor (`change-N`) the adherence
 * links to. Lines beyond {@link DIFF_MAX_LINES} are left out, with a sentence saying so.
 */
export function renderChanges(view: ChangesView, hasPlan: boolean): SafeHtml {
  if (view.sections.length === 0) return html`<p>No files were changed.</p>`;
  const anchor = new Map(view.sections.map((s, i) => [s.path, `change-${i + 1}`]));
  const link = (path: string) =>
    html`<a href="#${anchor.get(path) ?? ""}"><code>${path}</code></a>`;
  const { planned, unplanned, untouched } = view.adherence;
  const head = `${planned.length} ${planned.length === 1 ? "file" : "files"} changed as planned`;
  const adherence = hasPlan
    ? html`<p class="adherence${unplanned.length > 0 ? " adherence-off" : ""}" data-adherence="${view.sentence}"><strong>Plan adherence:</strong> ${head}${
        unplanned.length === 0
          ? ", none outside the plan."
          : html`, ${unplanned.length} not in the plan: ${joinHtml(unplanned.map(link))}.`
      }${untouched.length > 0 ? html` <span class="hint">The plan also named ${untouched.length === 1 ? "a file" : `${untouched.length} files`} left unchanged: ${joinHtml(untouched.map((p) => html`<code>${p}</code>`))}.</span>` : ""}</p>`
    : "";
  let added = 0;
  let removed = 0;
  for (const s of view.sections) {
    for (const line of s.lines) {
      if (line.startsWith("+") && !line.startsWith("+++ ")) added++;
      else if (line.startsWith("-") && !line.startsWith("--- ")) removed++;
    }
  }
  const files = view.sections.length;
  let budget = DIFF_MAX_LINES;
  let total = 0;
  const rendered = view.sections.map((s, i) => {
    total += s.lines.length;
    const shown = s.lines.slice(0, Math.max(0, budget));
    budget -= shown.length;
    const planned = view.adherence.planned.includes(s.path);
    return html`<section class="change-file" id="change-${i + 1}" aria-label="Changes to ${s.path}">
<h4><code>${s.path}</code>${hasPlan ? html` <span class="chip${planned ? "" : " chip-off"}">${planned ? "in the plan" : "not in the plan"}</span>` : ""}</h4>
${shown.length > 0 ? html`<pre class="diff" tabindex="0" aria-label="The changes to ${s.path} as a unified diff">${shown.map((line) => html`<span class="${lineClass(line)}">${line}</span>`)}</pre>` : ""}
</section>`;
  });
  return html`${adherence}
<p>${files} ${files === 1 ? "file" : "files"} changed: ${added} ${added === 1 ? "line" : "lines"} added, ${removed} removed.</p>
${rendered}
${total > DIFF_MAX_LINES ? html`<p class="hint">Only the first ${DIFF_MAX_LINES} of ${total} lines are shown; planport pull shows them all.</p>` : ""}`;
}

function joinHtml(items: readonly SafeHtml[]): SafeHtml[] {
  return items.flatMap((item, i) => (i === 0 ? [item] : [html`, `, item]));
}
