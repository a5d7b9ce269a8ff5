import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ExitPlanModeScanner,
  isFinal,
  MarkerMissingError,
  type ScanResult,
  strongest,
} from "../../../local-client/poll/scanner.ts";
import type { Event } from "../../../src/protocol/index.ts";
import { type EventBody, ev, numbered } from "../feed-events.ts";

/**
 * Property tests: a session's feed reaches the poller in arbitrary page and tick boundaries, so
 * the verdict and the rejection count must not depend on how the events were batched.
 */

type Step = { kind: "noise" } | { kind: "reject"; feedbackBlocks: boolean } | { kind: "question" };
type Ending =
  | { kind: "approve"; edited: boolean; plan: string }
  | { kind: "teleport"; plan: string }
  | { kind: "crash"; subtype: string }
  | { kind: "open" }
  | { kind: "none" };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: "noise" }),
  fc.record({ kind: fc.constant("reject" as const), feedbackBlocks: fc.boolean() }),
  fc.constant<Step>({ kind: "question" }),
);
const planArb = fc.string({ maxLength: 40 });
const endingArb: fc.Arbitrary<Ending> = fc.oneof(
  fc.record({ kind: fc.constant("approve" as const), edited: fc.boolean(), plan: planArb }),
  fc.record({ kind: fc.constant("teleport" as const), plan: planArb }),
  fc.record({
    kind: fc.constant("crash" as const),
    subtype: fc.constantFrom("error_during_execution", "error_max_turns", "archived"),
  }),
  fc.constant<Ending>({ kind: "open" }),
  fc.constant<Ending>({ kind: "none" }),
);

/** A well-formed session feed: research, ExitPlanMode/rejection rounds, then one ending. */
function feedOf(steps: Step[], ending: Ending, trailingEnd: boolean): Event[] {
  const bodies: EventBody[] = [ev.init()];
  let n = 0;
  for (const step of steps) {
    n += 1;
    if (step.kind === "noise")
      bodies.push(ev.text(), ev.toolUse(`r${n}`, "Read"), ev.toolResult(`r${n}`, "x", false));
    if (step.kind === "question") {
      bodies.push(
        ev.toolUse(`q${n}`, "AskUserQuestion"),
        ev.result("success"),
        ev.toolResult(`q${n}`, "a", false),
      );
    }
    if (step.kind === "reject") {
      bodies.push(ev.exitPlanMode(`p${n}`), ev.result("success"));
      bodies.push(ev.toolResult(`p${n}`, "keep planning", true, step.feedbackBlocks));
    }
  }
  const last = "final";
  if (ending.kind === "approve")
    bodies.push(ev.exitPlanMode(last), ev.approve(last, ending.plan, ending.edited));
  if (ending.kind === "teleport")
    bodies.push(ev.exitPlanMode(last), ev.teleport(last, ending.plan));
  if (ending.kind === "open") bodies.push(ev.exitPlanMode(last), ev.result("success"));
  if (ending.kind === "crash") bodies.push(ev.result(ending.subtype));
  // A teleport is followed by the archive; an approval may be followed by a crash.
  else if (trailingEnd && (ending.kind === "approve" || ending.kind === "teleport")) {
    bodies.push(ev.result(ending.kind === "teleport" ? "archived" : "error_during_execution"));
  }
  return numbered(bodies);
}

/** Cuts `events` into consecutive batches at the given (sorted, deduplicated) positions. */
function split(events: Event[], cuts: number[]): Event[][] {
  const points = [...new Set(cuts.map((c) => c % (events.length + 1)))].sort((a, b) => a - b);
  const batches: Event[][] = [];
  let from = 0;
  for (const p of [...points, events.length]) {
    batches.push(events.slice(from, p));
    from = p;
  }
  return batches;
}

/** What the poller would conclude: the first final result, as it stops there. */
function pollerVerdict(batches: Event[][]) {
  const scanner = new ExitPlanModeScanner();
  let verdict: ScanResult = { kind: "unchanged" };
  let combined: ScanResult = { kind: "unchanged" };
  for (const batch of batches) {
    const result = scanner.ingest(batch);
    combined = strongest(combined, result);
    if (isFinal(result)) {
      verdict = result;
      break;
    }
  }
  return {
    verdict,
    rejectCount: scanner.rejectCount,
    hasPendingPlan: scanner.hasPendingPlan,
    everSeenPending: scanner.everSeenPending,
  };
}

const feedArb = fc.tuple(fc.array(stepArb, { maxLength: 12 }), endingArb, fc.boolean());
const cutsArb = fc.array(fc.nat(), { maxLength: 20 });

describe("ExitPlanModeScanner properties", () => {
  it("any split of the events into batches gives the same verdict and reject count as one batch", () => {
    fc.assert(
      fc.property(feedArb, cutsArb, ([steps, ending, trailing], cuts) => {
        const events = feedOf(steps, ending, trailing);
        const whole = pollerVerdict([events]);
        const pieces = pollerVerdict(split(events, cuts));
        expect(pieces).toEqual(whole);
      }),
      { numRuns: 500 },
    );
  });

  it("counts every rejected ExitPlanMode exactly once", () => {
    fc.assert(
      fc.property(feedArb, cutsArb, ([steps, ending, trailing], cuts) => {
        const events = feedOf(steps, ending, trailing);
        const expected = steps.filter((s) => s.kind === "reject").length;
        const { rejectCount } = pollerVerdict(split(events, cuts));
        expect(rejectCount).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("the verdict follows the ending: approval and teleport win over a later end", () => {
    fc.assert(
      fc.property(feedArb, ([steps, ending, trailing]) => {
        const { verdict, hasPendingPlan } = pollerVerdict([feedOf(steps, ending, trailing)]);
        if (ending.kind === "approve")
          expect(verdict).toEqual({ kind: "approved", plan: ending.plan });
        if (ending.kind === "teleport")
          expect(verdict).toEqual({ kind: "teleport", plan: ending.plan });
        if (ending.kind === "crash")
          expect(verdict).toMatchObject({ kind: "terminated", subtype: ending.subtype });
        if (ending.kind === "open") expect(hasPendingPlan).toBe(true);
        if (ending.kind === "open" || ending.kind === "none")
          expect(verdict.kind).toBe("unchanged");
      }),
      { numRuns: 300 },
    );
  });

  it("one batch's result is the strongest of what its events say", () => {
    fc.assert(
      fc.property(feedArb, ([steps, ending, trailing]) => {
        const events = feedOf(steps, ending, trailing);
        const whole = new ExitPlanModeScanner().ingest(events);
        const perEvent = new ExitPlanModeScanner();
        let combined: ScanResult = { kind: "unchanged" };
        for (const e of events) combined = strongest(combined, perEvent.ingest([e]));
        // Pending is a state, not an event: it only counts if still open at the end.
        if (combined.kind === "pending" && !perEvent.hasPendingPlan)
          combined = { kind: "unchanged" };
        expect(whole).toEqual(combined);
      }),
      { numRuns: 300 },
    );
  });

  it("an approval without a marker throws in every batching", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 6 }), cutsArb, (steps, cuts) => {
        const events = feedOf(steps, { kind: "none" }, false);
        const bad = numbered(
          [ev.exitPlanMode("z"), ev.toolResult("z", "approved, go", false)],
          events.length + 1,
        );
        const scanner = new ExitPlanModeScanner();
        expect(() => {
          for (const batch of split([...events, ...bad], cuts)) scanner.ingest(batch);
        }).toThrow(MarkerMissingError);
      }),
      { numRuns: 100 },
    );
  });
});
