import { readableText } from "../../../../protocol/readable-text.ts";
import type { Steering } from "../feedback/steering.ts";
import type { FileKind } from "../feedback/targets.ts";
import { isKind } from "./kinds.ts";
import type { Listing } from "./listing.ts";

/**
 * The revision notes: what this revision changed in the file lists and why, in the reviewer's
 * own terms — and, as plainly, what the reviewer's words asked that it did not do ("I could
 * not act on: …"), what was already so ("`x` was not in the plan"), and which kind of file
 * the repository has none of. Pure. It never claims a change it did not make, and never
 * answers words it could not act on with a bare "the lists are the same".
 */

/** The plan before this revision, and the steering it was written with. */
export interface Before {
  listing: Listing;
  steering: Steering;
}

/** Longest quote of the reviewer's words in a note. */
const MAX_QUOTE_CHARS = 160;

const KIND_NAMES: Record<FileKind, string> = {
  tests: "tests",
  docs: "docs",
  changelog: "changelog",
  config: "configuration files",
  types: "type declarations",
};

/**
 * The notes of a revision against the plan before it (none for the first plan).
 *
 * @example
 * revisionNotes(before, now, s)
 * // ["Dropped `src/flask/wrappers.py`: you asked to leave it out.", "Dropped the test `tests/test_testing.py`: you asked to leave the tests out.", …]
 */
export function revisionNotes(before: Before | null, now: Listing, s: Steering): string[] {
  if (before === null) return [];
  const was = before.listing;
  const prior = before.steering;
  const listed = (l: Listing) =>
    new Set([...l.changes, ...l.checks, ...l.newFiles.map((n) => n.path)]);
  const beforeSet = listed(was);
  const afterSet = listed(now);
  const out: string[] = [];

  for (const n of now.newFiles) {
    if (beforeSet.has(n.path)) continue;
    const why =
      /\bmigration\b/.test(n.why) && s.migrationFromFeedback
        ? "your feedback asks for a schema change; this repository numbers its migrations"
        : n.why;
    out.push(`Added \`${n.path}\`: ${why}.`);
  }
  for (const p of [...now.changes, ...now.checks]) {
    if (beforeSet.has(p)) continue;
    out.push(`Added \`${p}\`: ${addedWhy(p, now, s)}.`);
  }
  for (const p of now.tests)
    if (!was.tests.includes(p))
      out.push(`Added the test \`${p}\`: ${s.reasons.get(p) ?? testWhy(now)}.`);
  for (const p of beforeSet) {
    if (afterSet.has(p)) continue;
    out.push(`Dropped \`${p}\`: ${droppedWhy(p, now, s)}.`);
  }
  for (const p of was.tests) {
    if (now.tests.includes(p)) continue;
    out.push(`Dropped the test \`${p}\`: ${droppedWhy(p, now, s)}.`);
  }
  // Files that stayed but moved: to the front (the change goes there), or to the files to check.
  const first = now.changes[0];
  if (
    first !== undefined &&
    was.changes[0] !== first &&
    beforeSet.has(first) &&
    s.reasons.has(first)
  )
    out.push(`\`${first}\` comes first now: ${s.reasons.get(first)}.`);
  for (const p of now.checks)
    if (was.changes.includes(p) && s.check.has(p))
      out.push(
        `\`${p}\` is now a file to check, not to change: ${s.reasons.get(p) ?? "you said so"}.`,
      );

  const changed = out.length > 0;
  // What the newest words asked that was already so.
  const absent = [...s.exclude].filter(
    (p) => !prior.exclude.has(p) && !beforeSet.has(p) && !was.tests.includes(p),
  );
  if (absent.length === 1)
    out.push(`\`${absent[0]}\` was not in the plan, so there was nothing to leave out.`);
  else if (absent.length > 1)
    out.push(
      `Not in the plan, so nothing to leave out: ${absent
        .slice(0, 6)
        .map((p) => `\`${p}\``)
        .join(", ")}${absent.length > 6 ? ` and ${absent.length - 6} more` : ""}.`,
    );
  for (const p of [...s.include, ...s.keep]) {
    if (prior.include.has(p) || prior.keep.has(p)) continue;
    if (was.tests.includes(p) && now.tests.includes(p))
      out.push(`\`${p}\` was already among the tests; the steps extend it.`);
    else if (p === first && was.changes[0] === first)
      out.push(`\`${p}\` was already first in the plan; it stays there.`);
    else if (p !== first && beforeSet.has(p) && afterSet.has(p))
      out.push(`\`${p}\` was already in the plan; it stays.`);
  }
  for (const p of s.check)
    if (!prior.check.has(p) && was.checks.includes(p) && now.checks.includes(p))
      out.push(`\`${p}\` was already a file to check, not to change; it stays one.`);
  for (const kind of s.kinds.drop)
    if (!prior.kinds.drop.has(kind) && !hadKind(was, kind, beforeSet))
      out.push(`The plan listed no ${KIND_NAMES[kind]}, so there were none to leave out.`);
  for (const kind of s.kinds.add)
    if (
      !prior.kinds.add.has(kind) &&
      !now.missing.some((m) => m.kind === kind) &&
      !addedAny(now, was, kind)
    )
      out.push(`The plan already listed the ${KIND_NAMES[kind]} you asked for.`);
  for (const m of now.missing)
    if (!was.missing.some((x) => x.kind === m.kind && x.why === m.why))
      out.push(`You asked for the ${KIND_NAMES[m.kind]}: ${m.why}.`);
  const unresolved = s.unresolved.filter((n) => !prior.unresolved.includes(n));
  if (unresolved.length > 0)
    out.push(
      `I could not tell which file defines ${unresolved.map((n) => `\`${readable(n, 60)}\``).join(", ")}: the name is too common here, or its search was cut short.`,
    );
  const unread = s.unread.filter(
    (u) => !prior.unread.some((x) => x.said === u.said && x.why === u.why),
  );
  for (const u of unread)
    out.push(`I could not act on: "${readable(u.said, MAX_QUOTE_CHARS)}" (${u.why}).`);
  if (!changed)
    out.unshift(
      out.length > 0
        ? "The file lists are the same as in the previous revision:"
        : "The file lists are the same as in the previous revision: your words asked for no change to them that I could read.",
    );
  return out;
}

function addedWhy(p: string, now: Listing, s: Steering): string {
  return (
    s.reasons.get(p) ??
    now.added.get(p) ??
    (s.include.has(p) || s.only?.includes(p)
      ? "you named it"
      : s.focus.has(p)
        ? "your comment was about it"
        : "it ranks among the files listed now")
  );
}

function droppedWhy(p: string, now: Listing, s: Steering): string {
  const reason = s.exclude.has(p) ? s.reasons.get(p) : undefined;
  if (reason !== undefined) return reason;
  for (const kind of now.dropped)
    if (isKind(p, kind)) return `you asked to leave the ${KIND_NAMES[kind]} out`;
  if (s.only !== null)
    return `you said the change is only in ${s.only.map((x) => `\`${x}\``).join(", ") || "the files you named"}`;
  return "it no longer ranks among the files listed, now that your feedback moved others in or out";
}

function testWhy(now: Listing): string {
  return now.dropped.has("tests") ? "you named it" : "it tests a file the plan lists now";
}

function hadKind(was: Listing, kind: FileKind, listed: ReadonlySet<string>): boolean {
  return kind === "tests"
    ? was.tests.length > 0 || [...listed].some((p) => isKind(p, "tests"))
    : [...listed].some((p) => isKind(p, kind));
}

function addedAny(now: Listing, was: Listing, kind: FileKind): boolean {
  if (kind === "tests")
    return (
      now.tests.some((t) => !was.tests.includes(t)) || now.newFiles.length > was.newFiles.length
    );
  return [...now.added.keys()].some((p) => isKind(p, kind));
}

/** The reviewer's words as a note quotes them: visible characters, one line, no quote marks. */
export function readable(text: string, max: number): string {
  const flat = readableText(text.slice(0, max * 4))
    .replace(/\s+/g, " ")
    .replace(/["`]/g, "'")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
