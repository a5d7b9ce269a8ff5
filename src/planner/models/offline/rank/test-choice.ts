import type { Knowledge } from "../repository/knowledge.ts";
import { pathKind } from "../repository/paths.ts";
import { coveringTests, isTestSupport, testPairing } from "../repository/tests.ts";
import type { RankedFile } from "./ranking.ts";
import type { Chosen } from "./selection.ts";

/**
 * Which tests a plan lists, and for which of its files (part of rank/): the test beside a
 * file, its namesake, or a test that exercises what the file defines. Pure.
 */

/** Tests a plan lists at most. */
export const MAX_TESTS = 4;

/**
 * The listed tests that are about `source`: paired by place or name, or exercising what it
 * defines ({@link Chosen.covers}).
 *
 * @example
 * testsOf({ tests: ["tests/test_request.py"], covers: new Map([["tests/test_request.py", "src/flask/wrappers.py"]]) }, "src/flask/wrappers.py")
 * // ["tests/test_request.py"]
 */
export function testsOf(
  chosen: { tests: readonly string[]; covers?: Chosen["covers"] },
  source: string,
): string[] {
  return chosen.tests.filter(
    (t) => testPairing(t, source) >= 2 || chosen.covers?.get(t) === source,
  );
}

/**
 * The tests of the listed files: for each file in order, the test beside it, then the one
 * named after its module, then — for the first files to change, when neither pairs — a test
 * that exercises what the file defines (`coveringTests`); then tests that
 * matched the task's terms, best first. Fixtures and support helpers are never listed as tests.
 */
export function testsFor(
  listed: readonly string[],
  ranking: readonly RankedFile[],
  k: Knowledge,
): { tests: string[]; covers: Map<string, string> } {
  const tests = [...k.known].filter((p) => pathKind(p) === "test").sort();
  const out: string[] = [];
  const covers = new Map<string, string>();
  const byPath = new Map(ranking.map((f) => [f.path, f]));
  const rankedTests = ranking
    .filter((f) => f.isTest)
    .map((f) => ({ path: f.path, names: f.defines.map((d) => d.name) }));
  for (const [i, source] of listed.entries()) {
    const paired = tests
      .map((test) => ({ test, pairing: testPairing(test, source) }))
      .filter((x) => x.pairing >= 2)
      .sort((a, b) => b.pairing - a.pairing || (a.test < b.test ? -1 : 1));
    // The test beside a file is its test; a namesake elsewhere only when there is none beside it.
    const best = paired[0]?.pairing ?? 0;
    for (const { test, pairing } of paired)
      if (pairing === best && !out.includes(test)) out.push(test);
    if (paired.length > 0 || i >= COVERED_FIRST) continue;
    const defined = byPath.get(source)?.defines.map((d) => d.name) ?? [];
    for (const test of coveringTests(defined, rankedTests)) {
      if (out.includes(test)) continue;
      out.push(test);
      covers.set(test, source);
    }
  }
  // Tests that only mention the task's words (a runtime-test entry point, an end-to-end
  // suite) are listed when nothing pairs with the code: beside a paired test they are noise.
  if (out.length > 0) return { tests: out.slice(0, MAX_TESTS), covers };
  for (const f of ranking)
    if (f.isTest && !f.named && !out.includes(f.path) && f.own > 0 && !isTestSupport(f.path))
      out.push(f.path);
  return { tests: out.slice(0, MAX_TESTS), covers };
}

/** Only the first files to change look for a test that exercises them by name. */
const COVERED_FIRST = 2;
