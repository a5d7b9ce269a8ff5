import { pathToFileURL } from "node:url";
import { ExitPlanModeScanner } from "../../local-client/index.ts";
import type { Event } from "../../src/protocol/index.ts";
import { type EventBody, ev, numbered } from "../client/feed-events.ts";
import { type BenchRow, formatTable, infoRow, limitRow, median } from "./rows.ts";

/**
 * P8: how many feed events per second the ExitPlanMode classifier reads —
 * `ExitPlanModeScanner.ingest` over a long synthetic planning session (research turns with
 * Read/Grep/Glob calls and their results, turn ends, user messages, plan submissions that get
 * rejected, a final approval), fed in feed pages of 1,000 events. Target: ≥ 1,000,000 events/s.
 * The baseline is `JSON.parse` of the same pages: the decoding the poller has to do anyway.
 *
 *   npx tsx test/bench/classifier.ts
 *
 * @example
 * const [row] = benchClassifier({ events: 200_000, runs: 7 });
 */

const EVENTS = 200_000;
const RUNS = 9;
const PAGE_EVENTS = 1_000;
const TARGET_EVENTS_PER_S = 1_000_000;
/** A plan is submitted (and rejected) every this many research cycles. */
const CYCLES_PER_PLAN = 8;

/**
 * Builds the synthetic session once, then alternates classifier and JSON.parse passes.
 *
 * @example const [row] = benchClassifier({ events: 50_000, runs: 3 });
 */
export function benchClassifier(options: { events?: number; runs?: number } = {}): BenchRow[] {
  const runs = options.runs ?? RUNS;
  const { pages, count, rejections } = syntheticSession(options.events ?? EVENTS);
  const texts = pages.map((page) => JSON.stringify({ data: page, has_more: true }));

  // The same pages as the poller holds them: objects JSON.parse made. The synthetic events are
  // made by spreading bodies of many shapes (`numbered`), which gives nearly every event a hidden
  // class of its own in V8, so each property read of the main row is a lookup without a cache;
  // parsed objects share their classes. The main row keeps the spread events (its record goes
  // back to the first run); this one says what the poller's own objects cost.
  const scanPages = (input: readonly Event[][]): number => {
    const scanner = new ExitPlanModeScanner();
    const started = performance.now();
    let last = "unchanged";
    for (const page of input) last = scanner.ingest(page).kind;
    const ms = performance.now() - started;
    if (last !== "approved" || scanner.rejectCount !== rejections) {
      throw new Error(
        `the classifier read ${last} with ${scanner.rejectCount} rejections; expected approved with ${rejections}`,
      );
    }
    return ms;
  };
  const parse = (): number => {
    const started = performance.now();
    let n = 0;
    for (const text of texts) n += (JSON.parse(text) as { data: unknown[] }).data.length;
    const ms = performance.now() - started;
    if (n !== count) throw new Error(`parsed ${n} events of ${count}`);
    return ms;
  };

  const scan = () => scanPages(pages);
  scan();
  parse();
  const scans: number[] = [];
  const parses: number[] = [];
  for (let run = 0; run < runs; run++) {
    scans.push(scan());
    parses.push(parse());
  }
  // After the main row, so that its heap (and so its collections) stays what it always was.
  const parsedPages = texts.map((text) => (JSON.parse(text) as { data: Event[] }).data);
  scanPages(parsedPages);
  const parsedScans: number[] = [];
  for (let run = 0; run < runs; run++) parsedScans.push(scanPages(parsedPages));
  const perSecond = (ms: number) => count / (ms / 1000);
  return [
    limitRow({
      id: "P8",
      name: `classifier throughput, ${count.toLocaleString("en-US")} events in pages of ${PAGE_EVENTS.toLocaleString("en-US")}, median of ${runs}`,
      unit: "events/s",
      value: perSecond(median(scans)),
      baseline: perSecond(median(parses)),
      baselineName: "JSON.parse of the same feed pages",
      atLeast: TARGET_EVENTS_PER_S,
    }),
    infoRow({
      id: "P8",
      name: `the same classifier on the same pages as JSON.parse returns them (the poller's objects), median of ${runs}`,
      unit: "events/s",
      value: perSecond(median(parsedScans)),
      baseline: perSecond(median(parses)),
      baselineName: "JSON.parse of the same feed pages",
    }),
  ];
}

/**
 * A long planning session as feed pages: cycles of research (text + tool calls, one result
 * event per call, as the worker writes them), a turn end and a user message; every
 * {@link CYCLES_PER_PLAN} cycles a plan is written, submitted and rejected; the last event
 * approves the final plan.
 */
function syntheticSession(target: number): {
  pages: Event[][];
  count: number;
  rejections: number;
} {
  const bodies: EventBody[] = [ev.init(), ev.userText("Add OAuth login and reuse the session")];
  const fileText = `${"export function handler(request: Request) {\n  return respond(request);\n}\n".repeat(24)}`;
  let call = 0;
  let cycle = 0;
  let rejections = 0;
  const id = () => `toolu_${String(++call).padStart(8, "0")}`;
  while (bodies.length < target) {
    cycle += 1;
    const read = id();
    bodies.push(
      {
        type: "assistant",
        message: {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look at how requests are handled." },
            { type: "tool_use", id: read, name: "Read", input: { file_path: `src/h${cycle}.ts` } },
          ],
        },
      },
      ev.toolResult(read, fileText, false),
    );
    const grep = id();
    const glob = id();
    bodies.push(
      {
        type: "assistant",
        message: {
          role: "assistant",
          content: [
            { type: "tool_use", id: grep, name: "Grep", input: { pattern: "session" } },
            { type: "tool_use", id: glob, name: "Glob", input: { pattern: "src/**/*.ts" } },
          ],
        },
      },
      ev.toolResult(grep, "Found 3 files\nsrc/a.ts\nsrc/b.ts\nsrc/c.ts", false),
      ev.toolResult(glob, "src/a.ts\nsrc/b.ts", false, true),
      ev.text("The session middleware already covers most of this."),
      ev.result("success"),
      ev.userText("Keep the old cookie name working."),
    );
    if (cycle % CYCLES_PER_PLAN === 0) {
      const write = id();
      const exit = id();
      bodies.push(
        ev.toolUse(write, "Write", { file_path: "/plans/bold-eagle.md", content: "# Plan\n" }),
        ev.toolResult(write, "The plan file was written.", false),
        ev.exitPlanMode(exit),
        ev.result("success"),
        ev.reject(exit, "Please also cover the migrations."),
      );
      rejections += 1;
    }
  }
  const last = id();
  bodies.push(ev.exitPlanMode(last), ev.approve(last, "# Plan\n\n1. Do it.\n"));
  const events = numbered(bodies);
  const pages: Event[][] = [];
  for (let i = 0; i < events.length; i += PAGE_EVENTS) pages.push(events.slice(i, i + PAGE_EVENTS));
  return { pages, count: events.length, rejections };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatTable(benchClassifier()));
}
