import type { DiagramReport } from "./diagram-message.ts";

/**
 * The diagram frame's script (bundled as DIAGRAM_SCRIPT, inlined by src/review/diagram-frame.ts).
 * It runs in a sandboxed frame with an opaque origin, next to mermaid's bundle: it reads the
 * diagram's text from the URL fragment, renders it with `securityLevel: "strict"` (labels
 * sanitised, no click handlers, no links to javascript:), shows the SVG and tells the page
 * whether it worked and how tall it is. The page keeps the code block until it hears "ok".
 */

interface Mermaid {
  initialize(config: Record<string, unknown>): void;
  render(id: string, text: string): Promise<{ svg: string }>;
}

const mermaid = (globalThis as { mermaid?: Mermaid }).mermaid;

function report(ok: boolean): void {
  const message: DiagramReport = {
    planport: "diagram",
    ok,
    height: ok ? Math.ceil(document.documentElement.scrollHeight) : 0,
  };
  // The page is this worker's own: the frame's URL origin (its document's origin is opaque).
  window.parent.postMessage(message, location.origin);
}

async function draw(): Promise<void> {
  const target = document.getElementById("diagram");
  if (!mermaid || !target) return report(false);
  let source: string;
  try {
    source = decodeURIComponent(location.hash.slice(1));
  } catch {
    return report(false);
  }
  if (source.trim() === "") return report(false);
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: "neutral",
    fontFamily: "system-ui, sans-serif",
  });
  try {
    const { svg } = await mermaid.render("planport-diagram", source);
    target.innerHTML = svg;
  } catch {
    return report(false);
  }
  report(true);
  // The SVG scales with the frame's width: tell the page each new height.
  new ResizeObserver(() => report(true)).observe(target);
}

void draw();
