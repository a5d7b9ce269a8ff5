import { DIFF_MAX_LINES } from "../limits.ts";
import { callApi, errorMessage } from "./api.ts";
import { setVisibleText } from "./visible-text.ts";

/**
 * The diff after remote execution, fetched from `GET …/changes` and drawn as text, one element
 * per line, coloured by its +/- prefix; a hidden character in the changed code shows as a mark
 * (visible-text.ts).
 */

/** Loads and draws every diff placeholder of the page not drawn yet. */
export async function loadDiffs(): Promise<void> {
  const targets = document.querySelectorAll<HTMLElement>("[data-diff-target]:not([data-loaded])");
  for (const target of Array.from(targets)) {
    target.setAttribute("data-loaded", "");
    try {
      const text = await (await callApi("GET", "/changes")).text();
      renderDiff(target, text);
    } catch (err) {
      const p = document.createElement("p");
      p.className = "form-error";
      setVisibleText(p, `The changes could not be loaded: ${errorMessage(err)}`);
      target.replaceChildren(p);
      target.removeAttribute("data-loaded");
    }
  }
}

function diffClass(line: string): string {
  if (line.startsWith("diff --git") || line.startsWith("+++ ") || line.startsWith("--- ")) {
    return "diff-file";
  }
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-context";
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function renderDiff(target: HTMLElement, text: string): void {
  if (text.trim() === "") {
    const p = document.createElement("p");
    p.textContent = "No files were changed.";
    target.replaceChildren(p);
    return;
  }
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  let files = 0;
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.startsWith("diff --git")) files += 1;
    else if (line.startsWith("+") && !line.startsWith("+++ ")) added += 1;
    else if (line.startsWith("-") && !line.startsWith("--- ")) removed += 1;
  }
  const summary = document.createElement("p");
  summary.textContent = `${plural(files, "file", "files")} changed: ${plural(added, "line", "lines")} added, ${removed} removed.`;
  const pre = document.createElement("pre");
  pre.className = "diff";
  pre.tabIndex = 0;
  pre.setAttribute("aria-label", "The changes as a unified diff");
  for (const line of lines.slice(0, DIFF_MAX_LINES)) {
    const span = document.createElement("span");
    span.className = diffClass(line);
    setVisibleText(span, line);
    pre.append(span);
  }
  const parts: HTMLElement[] = [summary, pre];
  if (lines.length > DIFF_MAX_LINES) {
    const more = document.createElement("p");
    more.className = "hint";
    more.textContent = `Only the first ${DIFF_MAX_LINES} of ${lines.length} lines are shown; planport pull shows them all.`;
    parts.push(more);
  }
  target.replaceChildren(...parts);
}
