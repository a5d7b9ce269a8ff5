import {
  DIAGRAM_FRAME_PATH,
  isDiagramReport,
  MAX_DIAGRAM_HEIGHT,
  MAX_DIAGRAM_SOURCE,
} from "./diagram-message.ts";

/**
 * Turns the plan's ```` ```mermaid ```` code blocks into diagrams. Each block gets a sandboxed
 * frame (`sandbox="allow-scripts"`: an opaque origin, no access to this page, its key or its
 * API) that draws the block's text with mermaid; the frame stays invisible and the code block
 * stays as it is until that frame reports success, so a broken diagram (or no JavaScript) shows
 * the code. Only reports whose `event.source` is one of these frames are heard; a frame reports
 * again when its diagram's height changes (the page's width changed).
 */

interface PendingDiagram {
  frame: HTMLIFrameElement;
  block: HTMLElement;
}

const frames = new WeakMap<object, PendingDiagram>();

/** Gives every not-yet-handled mermaid block under `root` its frame. */
export function renderDiagrams(root: ParentNode): void {
  for (const code of Array.from(root.querySelectorAll("pre > code.language-mermaid"))) {
    const block = code.parentElement;
    if (!block || block.dataset.diagram) continue;
    const source = code.textContent ?? "";
    block.dataset.diagram = "code";
    if (source.trim() === "" || source.length > MAX_DIAGRAM_SOURCE) continue;
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.className = "diagram-frame";
    frame.title = "Diagram";
    frame.src = `${DIAGRAM_FRAME_PATH}#${encodeURIComponent(source)}`;
    block.after(frame);
    if (frame.contentWindow) frames.set(frame.contentWindow, { frame, block });
  }
}

window.addEventListener("message", (event) => {
  // A sandboxed frame's origin is opaque: its messages come from "null".
  if (event.origin !== "null") return;
  const pending = event.source ? frames.get(event.source) : undefined;
  if (!pending || !isDiagramReport(event.data)) return;
  const { frame, block } = pending;
  if (!event.data.ok || !frame.isConnected) {
    // A frame that failed once is gone, and nothing it says afterwards is heard.
    frames.delete(event.source as object);
    block.dataset.diagram = "failed";
    frame.remove();
    block.hidden = false;
    return;
  }
  frame.height = String(Math.min(Math.max(event.data.height, 24), MAX_DIAGRAM_HEIGHT));
  frame.classList.add("drawn");
  block.hidden = true;
  block.dataset.diagram = "drawn";
});
