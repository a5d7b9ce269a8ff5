import { describe, expect, it } from "vitest";
import {
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  retryWait,
} from "../../../local-client/http/retry-after.ts";

/** The Retry-After header as a wait in ms (issue 10, finding 10): both RFC 9110 forms, nothing else. */

const NOW = Date.parse("2026-03-01T12:00:00Z");

describe("parseRetryAfter", () => {
  it.each([
    ["0", 0],
    ["1", 1_000],
    ["120", 120_000],
    [" 30 ", 30_000],
    ["99999", 99_999_000],
  ])("reads delta-seconds %j", (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([
    ["IMF-fixdate", "Sun, 01 Mar 2026 12:00:45 GMT", 45_000],
    ["RFC 850", "Sunday, 01-Mar-26 12:01:00 GMT", 60_000],
    ["asctime (always GMT)", "Sun Mar  1 12:00:10 2026", 10_000],
    ["a date in the past", "Sat, 28 Feb 2026 12:00:00 GMT", 0],
  ])("reads an HTTP-date: %s", (_form, value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([
    null,
    undefined,
    "",
    "soon",
    "soon 5",
    "-5",
    "1.5",
    "5s",
    "0x10",
    "1e3",
    "Mon, garbage",
    "2026-03-01T12:00:45Z",
    "9".repeat(400),
  ])("ignores %j", (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});

describe("retryWait", () => {
  it("is the Retry-After, at least the floor, at most 60 s", () => {
    expect(retryWait(20_000, 3_000)).toBe(20_000);
    expect(retryWait(1_000, 3_000)).toBe(3_000);
    expect(retryWait(undefined, 3_000)).toBe(3_000);
    expect(retryWait(99_999_000, 3_000)).toBe(MAX_RETRY_AFTER_MS);
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
  });
});
