import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { benchClassifier } from "./classifier.ts";
import { benchClientPolling } from "./client.ts";
import { benchDecision } from "./decision.ts";
import { benchDeep } from "./deep.ts";
import { benchFeed, type FeedResult } from "./feed.ts";
import { benchGrep } from "./grep.ts";
import { benchInstalled } from "./installed.ts";
import { benchLoad } from "./load.ts";
import { compareWithRecord, formatWarning, loadRecords } from "./recorded.ts";
import { type BenchRow, formatTable } from "./rows.ts";
import { benchSnapshot } from "./snapshot.ts";
import { benchIncrementalSnapshot } from "./snapshot-incremental.ts";
import { startBenchWorker } from "./worker.ts";

/**
 * `npm run bench`: every performance promise (P1–P11) measured against its baseline in the
 * same run, printed as one table. Starts its own `wrangler dev` (fresh persist directory, the
 * scripted planner allowed) and stops it at the end.
 *
 *   npm run bench                          # the full run (about 6 minutes)
 *   npm run bench -- --quick               # shorter sections, for development
 *   npm run bench -- --only P1,P3          # some sections
 *   npm run bench -- --out results.md      # also write the table with the run's context
 *
 * A row worse than its figure in test/bench/recorded.json (what RESULTS.md records; update both
 * together) by more than that figure's noise is printed as a `WARNING:` line after the table.
 */

const SECTIONS = ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10", "P11"] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    out: { type: "string" },
  },
});
const quick = values.quick;
const only = new Set(
  (values.only ?? SECTIONS.join(",")).split(",").map((s) => s.trim().toUpperCase()),
);
for (const name of only) {
  if (!(SECTIONS as readonly string[]).includes(name)) {
    console.error(`Unknown section ${name}; choose from ${SECTIONS.join(", ")}.`);
    process.exit(2);
  }
}
const wanted = (s: Section) => only.has(s);
// Read first: a malformed file fails the run before it spends minutes measuring.
const records = loadRecords();

const context = {
  date: new Date().toISOString(),
  cpus: `${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}`,
  nproc: execFileSync("nproc", { encoding: "utf8" }).trim(),
  node: process.version,
  loadAtStart: loadavg()
    .map((n) => n.toFixed(2))
    .join(", "),
  command: `npm run bench${process.argv.slice(2).length > 0 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
};
console.error(
  `planport bench · ${context.date} · nproc ${context.nproc} · load ${context.loadAtStart}`,
);

const rows: BenchRow[] = [];
const began = performance.now();
async function section<T>(label: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  console.error(`… ${label}`);
  const result = await run();
  console.error(`  ${label} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

const worker = await section("starting wrangler dev", startBenchWorker);
try {
  let feed: FeedResult | null = null;
  if (wanted("P1") || wanted("P2") || wanted("P3")) {
    feed = await section("P1/P2 events poll vs healthz", () =>
      benchFeed(worker, quick ? { samples: 500, terminalSamples: 200 } : {}),
    );
    rows.push(
      ...feed.rows.filter(
        (r) => (r.id === "P1" && wanted("P1")) || (r.id === "P2" && wanted("P2")),
      ),
    );
  }
  if (wanted("P3") && feed !== null) {
    const rttMs = feed.rttMs;
    rows.push(
      ...(await section("P3 decision → CLI outcome", () =>
        benchDecision(worker, { rttMs, trials: quick ? 6 : 25 }),
      )),
    );
  }
  if (wanted("P4")) {
    rows.push(
      ...(await section("P4 snapshot build + upload", () =>
        benchSnapshot({
          ...(quick ? { files: 2_000, runs: 3 } : {}),
          upload: { server: worker.url, tokenForRun: (n) => worker.freshOwner(n) },
        }),
      )),
    );
  }
  if (wanted("P9")) {
    rows.push(
      ...(await section("P9 incremental snapshots", () =>
        benchIncrementalSnapshot({
          ...(quick ? { files: 2_000, runs: 2 } : {}),
          upload: { server: worker.url, tokenForRun: (n) => worker.freshOwner(n) },
        }),
      )),
    );
  }
  if (wanted("P5")) {
    rows.push(
      ...(await section("P5 worker Grep vs GNU grep", () =>
        benchGrep(worker, quick ? { trials: 2, treeBytes: 10_000_000 } : {}),
      )),
    );
  }
  if (wanted("P6")) {
    rows.push(
      ...(await section("P6 client CPU while polling", () =>
        benchClientPolling(quick ? { windowMs: 10_000, settleMs: 12_000 } : {}),
      )),
    );
  }
  if (wanted("P7")) {
    rows.push(
      ...(await section("P7 load: 200 sessions", () =>
        benchLoad(worker, quick ? { durationMs: 15_000 } : {}),
      )),
    );
  }
  if (wanted("P8")) {
    rows.push(
      ...(await section("P8 classifier throughput", async () =>
        benchClassifier(quick ? { events: 50_000, runs: 3 } : {}),
      )),
    );
  }
  if (wanted("P10")) {
    // Its own wrangler dev, pointed at the Anthropic Messages API double.
    rows.push(
      ...(await section("P10 deep session: concurrent explorers", () =>
        benchDeep(quick ? { trials: 1 } : {}),
      )),
    );
  }
  if (wanted("P11")) {
    rows.push(
      ...(await section("P11 the installed command: start-up, cold start, size", () =>
        benchInstalled(worker, quick ? { runs: 3 } : {}),
      )),
    );
  }
} catch (error) {
  if (worker.recentLog.length > 0) {
    console.error(`wrangler's last output lines:\n${worker.recentLog.join("\n")}`);
  }
  throw error;
} finally {
  await worker.stop();
}

const loadAtEnd = loadavg()
  .map((n) => n.toFixed(2))
  .join(", ");
const table = formatTable(rows);
console.log(table);
// Rows worse than test/bench/RESULTS.md records them (test/bench/recorded.json) by more than
// their noise: named here, whether or not the row's target is still met.
const warnings = compareWithRecord(rows, records).map(formatWarning);
if (warnings.length > 0) console.error(`\n${warnings.join("\n")}`);
const missed = rows.filter((r) => r.met === false).map((r) => r.id);
console.error(
  `\n${rows.filter((r) => r.met === true).length} met, ${missed.length} not met${missed.length > 0 ? ` (${[...new Set(missed)].join(", ")})` : ""} · ${((performance.now() - began) / 1000).toFixed(0)} s · load at end ${loadAtEnd}`,
);
if (values.out !== undefined) {
  writeFileSync(
    values.out,
    [
      `Run: ${context.date} · \`${context.command}\`${quick ? " (quick: shortened sections)" : ""}`,
      `Machine: nproc ${context.nproc} (${context.cpus}), Node ${context.node}; load average (1, 5, 15 min) at start ${context.loadAtStart}, at end ${loadAtEnd}`,
      "",
      table,
      "",
      ...(warnings.length > 0 ? [...warnings, ""] : []),
    ].join("\n"),
  );
}
