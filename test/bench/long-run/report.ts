import { median } from "../rows.ts";
import { mib, type StateSample, totalBytes } from "./state-folder.ts";
import type { Planned, UploadPath } from "./worker.ts";

/**
 * The long-run benchmark's tables (pure): per upload path, the plan time and workerd CPU of a
 * window around the 10th plan against the last window, the state folder by part after every
 * 10 plans, and the late plans run again on a fresh worker, interleaved with the grown one.
 */

export interface PlanSample extends Planned {
  /** 1-based plan number on the grown worker. */
  n: number;
  commit: string;
  uploadMs: number;
}

/** The same task on the same tree, on the grown worker and on a fresh one, run back to back. */
export interface Pair {
  task: string;
  grown: Planned;
  fresh: Planned;
}

export interface PathResult {
  path: UploadPath;
  plans: PlanSample[];
  states: StateSample[];
  pairs: Pair[];
  failures: string[];
}

export interface Windows {
  early: { from: number; to: number };
  late: { from: number; to: number };
  every: number;
}

function medianOf(samples: readonly Planned[], pick: (s: Planned) => number): number {
  const values = samples.filter((s) => s.ok).map(pick);
  return values.length === 0 ? Number.NaN : median(values);
}

function inWindow(samples: readonly PlanSample[], w: { from: number; to: number }): PlanSample[] {
  return samples.filter((s) => s.n >= w.from && s.n <= w.to);
}

const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(0)} ms` : "—");
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "—");

export function formatReport(results: readonly PathResult[], windows: Windows): string {
  const { early, late } = windows;
  const span = (w: { from: number; to: number }) => `${w.from}–${w.to}`;
  const lines: string[] = [
    `| path | plan time, plans ${span(early)} → ${span(late)} (medians) | ratio | workerd CPU per plan, same windows | ratio | last plans again, grown ÷ fresh worker (interleaved): time · CPU | same files named | state after the last plan: R2 / Durable Objects / other | growth per plan after the 10th | failed |`,
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const e = inWindow(r.plans, early);
    const l = inWindow(r.plans, late);
    const wall = [medianOf(e, (s) => s.planMs), medianOf(l, (s) => s.planMs)] as const;
    const cpu = [medianOf(e, (s) => s.cpuMs), medianOf(l, (s) => s.cpuMs)] as const;
    const grown = r.pairs.map((p) => p.grown);
    const fresh = r.pairs.map((p) => p.fresh);
    const same = r.pairs.filter(
      (p) => p.grown.ok && p.fresh.ok && p.grown.named.join("\n") === p.fresh.named.join("\n"),
    ).length;
    const last = r.states.at(-1);
    const tenth = r.states.find((s) => s.afterPlans === 10);
    const growth =
      last !== undefined && tenth !== undefined && last.afterPlans > 10
        ? (totalBytes(last) - totalBytes(tenth)) / (last.afterPlans - 10)
        : Number.NaN;
    lines.push(
      `| ${r.path} | ${ms(wall[0])} → ${ms(wall[1])} | ${ratio(wall[1], wall[0])} | ${ms(cpu[0])} → ${ms(cpu[1])} | ${ratio(cpu[1], cpu[0])} | ${ratio(
        medianOf(grown, (s) => s.planMs),
        medianOf(fresh, (s) => s.planMs),
      )} · ${ratio(
        medianOf(grown, (s) => s.cpuMs),
        medianOf(fresh, (s) => s.cpuMs),
      )} | ${same} of ${r.pairs.length} | ${last ? `${mib(totalBytes(last))}: ${mib(last.r2Bytes)} / ${mib(last.doBytes)} / ${mib(last.otherBytes)}` : "—"} | ${Number.isFinite(growth) ? mib(growth) : "—"} | ${r.failures.length} |`,
    );
  }
  for (const r of results) {
    lines.push(
      "",
      `**${r.path}**, every ${windows.every} plans (medians of those plans; the state folder when they were done):`,
      "",
      "| plans | plan time | workerd CPU | upload | R2 (files) | Durable Objects (files) | other |",
      "|---|---|---|---|---|---|---|",
    );
    for (const s of r.states) {
      const w = inWindow(r.plans, { from: s.afterPlans - windows.every + 1, to: s.afterPlans });
      const upload = w.length === 0 ? Number.NaN : median(w.map((p) => p.uploadMs));
      lines.push(
        `| ${w[0]?.n ?? "?"}–${s.afterPlans} | ${ms(medianOf(w, (p) => p.planMs))} | ${ms(medianOf(w, (p) => p.cpuMs))} | ${ms(upload)} | ${mib(s.r2Bytes)} (${s.r2Files}) | ${mib(s.doBytes)} (${s.doFiles}) | ${mib(s.otherBytes)} |`,
      );
    }
    if (r.failures.length > 0) lines.push("", "Failures:", ...r.failures.map((f) => `- ${f}`));
  }
  return lines.join("\n");
}
