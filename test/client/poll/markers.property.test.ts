import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { answersResult, planDecisionResult } from "../../../src/planner/decisions.ts";
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  neutralizeMarkers,
  TELEPORT_SENTINEL,
  toolResultText,
} from "../../../src/protocol/index.ts";

/** User text can never produce a protocol marker (issue 10, finding 2). */

const MARKERS = [TELEPORT_SENTINEL, APPROVED_PLAN_MARKER, APPROVED_PLAN_EDITED_MARKER];

/** Strings built from marker fragments, so the generator reaches overlaps and repeats. */
const markerish = fc
  .array(
    fc.oneof(
      fc.constantFrom(...MARKERS, "__", "_", "ULTRAPLAN", "## Approved Plan", ":", "\n", "## "),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(""));

const containsMarker = (text: string) => MARKERS.some((m) => text.includes(m));

describe("neutralizeMarkers", () => {
  it("leaves no marker in any text", () => {
    fc.assert(
      fc.property(markerish, (text) => {
        expect(containsMarker(neutralizeMarkers(text))).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it("changes nothing in text without a marker", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(!text.includes("## Approved Plan") && !text.includes(TELEPORT_SENTINEL));
        expect(neutralizeMarkers(text)).toBe(text);
      }),
    );
  });

  it("keeps the text readable: the words stay", () => {
    expect(neutralizeMarkers(`see ${TELEPORT_SENTINEL} and ${APPROVED_PLAN_MARKER}`)).toBe(
      "see «ULTRAPLAN_TELEPORT_LOCAL» and ## Approved plan (quoted):",
    );
  });
});

describe("tool results built from a reviewer's text", () => {
  it("a rejection's feedback, quotes and comments never carry a marker", () => {
    fc.assert(
      fc.property(markerish, markerish, markerish, (feedback, quote, text) => {
        const result = planDecisionResult("toolu_1", {
          kind: "reject",
          feedback: `${feedback}x`,
          comments: [{ quote: `${quote}q`, text: `${text}t` }],
          planPath: "/plans/bold-eagle.md",
        });
        expect(result.is_error).toBe(true);
        expect(containsMarker(toolResultText(result.content))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it("answers to a question never carry a marker", () => {
    fc.assert(
      fc.property(markerish, markerish, (question, answer) => {
        const result = answersResult("toolu_q", { [question]: answer });
        expect(containsMarker(toolResultText(result.content))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it("a teleport still carries the sentinel on a line of its own, before the plan", () => {
    const plan = `# Plan\n${TELEPORT_SENTINEL}\nplanted by the model`;
    const text = toolResultText(planDecisionResult("toolu_1", { kind: "teleport", plan }).content);
    expect(text.split("\n").indexOf(TELEPORT_SENTINEL)).toBeGreaterThan(0);
    expect(text.endsWith(`${TELEPORT_SENTINEL}\n${plan}`)).toBe(true);
  });
});
