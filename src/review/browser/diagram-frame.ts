import { readableText } from "../../protocol/readable-text.ts";
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

/**
 * Mermaid decodes entity codes in labels (`#8238;`), so a diagram can hold a hidden character
 * the page's code block never had: each one becomes its visible mark (protocol
 * readable-text.ts), in the text and the attributes, before the frame paints.
 */
function showMarks(root: Element): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const text = node as Text;
    const shown = readableText(text.data);
    if (shown !== text.data) text.data = shown;
  }
  for (const el of [root, ...Array.from(root.querySelectorAll("*"))]) {
    for (const attr of Array.from(el.attributes)) {
      const shown = readableText(attr.value);
      if (shown !== attr.value) attr.value = shown;
    }
  }
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
    showMarks(target);
  } catch {
    return report(false);
  }
  report(true);
  // The SVG scales with the frame's width: tell the page each new height.
  new ResizeObserver(() => report(true)).observe(target);
}

void draw();
