import type { RankedFile } from "../rank/ranking.ts";
import { testsOf } from "../rank/test-choice.ts";
import type { Existing } from "../repository/existing.ts";
import type { Knowledge } from "../repository/knowledge.ts";
import { enclosing, formatLines, formatSpan, symbolSpans } from "../repository/line-refs.ts";
import { dirOf, extensionOf, fileStem, pathKind } from "../repository/paths.ts";
import {
  closestCase,
  type Declaration,
  declarationsOf,
  entryFunction,
  optionsTypes,
  type TestCase,
  testCases,
} from "../repository/places.ts";
import type { TaskIntent, TaskKind } from "../task/intent.ts";
import { type FileNote, REUSE, symbolList, words } from "./file-notes.ts";
import type { Listing } from "./listing.ts";

/**
 * What the plan tells the reader to do, file by file and step by step, from the places the
 * evidence found: the option already declared (`maxAge?: number` in `CORSOptions`, line 19),
 * the options type to extend, the function that reads it, the line a traceback or a link
 * points at, the function the task names, the test case to put a new one beside. Pure. Where
 * the evidence names no place, the step says only what it knows — never a filler sentence.
 */

/** What a plan's steps are made from. */
export interface PlanFacts {
  k: Knowledge;
  intent: TaskIntent;
  list: Listing;
  byPath: ReadonlyMap<string, RankedFile>;
  note: (path: string) => FileNote;
  /** The part of a one-line task a file is about ("reuses the existing session"); null for issues. */
  clauseOf: (path: string) => string | null;
  /** A file to change → the new file it registers. */
  registers: ReadonlyMap<string, string>;
  /** The tests the plan lists. */
  tests: readonly string[];
  /** Tests listed for the code they exercise (rank/test-choice.ts `testsOf`). */
  covers?: ReadonlyMap<string, string>;
  existing: readonly Existing[];
  hasCommands: boolean;
}

/** The verb for a file's part of the task: its clause's "reuse", else the task's kind. */
export function verbFor(kind: TaskKind, clause: string | null): string {
  if (clause !== null && REUSE.test(clause)) return "reuse";
  return kind === "add"
    ? "extend"
    : kind === "fix"
      ? "fix"
      : kind === "remove"
        ? "remove the part concerned from"
        : "change";
}

/**
 * What to do in one listed file, as the list line says it (before its evidence).
 *
 * @example
 * fileAction(facts, "src/middleware/cors/index.ts", false)
 * // "`maxAge` is already here (`maxAge?: number` in `CORSOptions`, line 19): validate it where `cors` reads it (lines 63–143)"
 */
export function fileAction(p: PlanFacts, path: string, check: boolean): string {
  const n = p.note(path);
  if (check) {
    const symbols = symbolList(n);
    if (symbols) return `check ${symbols}`;
    if (n.mentions.length > 0) return `check ${formatLines(n.mentions[0]!.lines)}`;
    return "check whether it needs a matching change";
  }
  const clause = p.clauseOf(path);
  const part = clause !== null ? ` — for "${clause}"` : "";
  const registers = p.registers.get(path);
  if (registers !== undefined) {
    const lines =
      n.registrations.length > 0 ? ` (${formatLines(n.registrations.slice(0, 6))})` : "";
    return `register \`${registers}\` where the existing ones are registered${lines}`;
  }
  const where = placeOf(n);
  if (n.role === "declaration")
    return `${p.intent.kind === "fix" || p.intent.kind === "remove" ? "update" : "declare the change in"} the types${where ? `: ${where}` : ""}${part}`;
  if (n.role === "docs" && pathKind(path) === "changelog")
    return `add an entry for the change${part}`;
  if (n.role === "docs")
    return `document the change${where.startsWith("(") ? ` at ${where.slice(1, -1)}` : where ? ` where ${where}` : ""}${part}`;
  const specific = specificAction(p, path, clause);
  if (specific !== null) return `${specific}${part}`;
  const f = p.byPath.get(path);
  if (where === "") {
    if (f !== undefined && f.own === 0 && (f.imports.length > 0 || f.importedBy.length > 0))
      return "wired to the files above by imports: follow the change through to its callers here";
    const matched = [
      ...new Set([
        ...(f?.defines.map((d) => d.term) ?? []),
        ...(f?.termHits.map((h) => h.term) ?? []),
      ]),
    ]
      .slice(0, 3)
      .map((x) => `\`${x}\``);
    return matched.length > 0
      ? `the task's ${words(matched)} appear here${part}`
      : `ranked by the search${part}`;
  }
  return `${verbFor(p.intent.kind, clause)} ${where}${part}`;
}

/**
 * The action the evidence makes specific: the option the task adds (already there, its
 * options type, or the function that would take it), the line a frame or link points at, the
 * message the file reports, the function the task names. Null when none applies.
 */
function specificAction(p: PlanFacts, path: string, clause: string | null): string | null {
  const lines = p.k.texts.get(path);
  if (lines === undefined) return null;
  const verb = verbFor(p.intent.kind, clause);
  const option = p.intent.option?.replace(/^-+/, "") ?? null;
  if (option !== null && p.intent.kind === "add") {
    const declared = declarationsOf(path, lines, option)[0];
    const entry = entryFunction(path, lines, p.intent.names, p.intent.command);
    const taken = entry === null ? null : takenOption(entry.signature, option, p.existing);
    // Taken as its own parameter, or through an options type declared in another file (one
    // declared here is "already here" below).
    if (entry !== null && taken !== null && (taken.declared === null || declared === undefined)) {
      const range = formatSpan(entry.span.start, entry.span.end);
      if (taken.declared === null)
        return `\`${entry.span.name}\` (${range}) already takes \`${option}\` — \`${taken.param}\` — so ${p.intent.treatment ?? "change"} what it does with it rather than adding a second one`;
      const at = taken.declared;
      return `\`${entry.span.name}\` (${range}) already takes \`${option}\` through \`${taken.param}\` (\`${at.text}\` in \`${at.within}\`, line ${at.line} of \`${at.path}\`): ${p.intent.treatment ?? "change"} what it does with it rather than adding a second one`;
    }
    if (declared !== undefined) {
      const reads =
        entry !== null && entry.span.name !== declared.within
          ? ` where \`${entry.span.name}\` reads it (${formatSpan(entry.span.start, entry.span.end)})`
          : "";
      return `\`${option}\` is already here (\`${declared.text}\`${declared.within ? ` in \`${declared.within}\`` : ""}, line ${declared.line}): ${p.intent.treatment ?? "change"} it${reads} rather than adding a second one`;
    }
    const type = optionsTypes(path, lines)[0];
    if (type !== undefined) {
      const reads =
        entry !== null
          ? ` and read it in \`${entry.span.name}\` (${formatSpan(entry.span.start, entry.span.end)})`
          : "";
      return `add \`${option}\` to \`${type.span.name}\` (${formatSpan(type.span.start, type.span.end)})${reads}`;
    }
    const optionsParam = entry === null ? null : OPTIONS_PARAM.exec(entry.signature);
    if (entry !== null && optionsParam !== null)
      return `add \`${option}\` to \`${optionsParam[2]}\`, which \`${entry.span.name}\` (${formatSpan(entry.span.start, entry.span.end)}) takes as \`${optionsParam[1]}\``;
    if (entry !== null)
      return `\`${entry.span.name}\` (${formatSpan(entry.span.start, entry.span.end)}) takes no options object — \`${entry.signature}\` — so \`${option}\` needs one (keep the current call working)`;
  }
  const f = p.byPath.get(path);
  const spans = symbolSpans(path, lines);
  const pointed = f?.pointers.find((x) => x.line !== null);
  if (pointed !== undefined && pointed.line !== null) {
    const around = enclosing(spans, pointed.line);
    return `${verb} ${around !== null ? `\`${around.name}\` (${formatSpan(around.start, around.end)})` : `line ${pointed.line}`} — the task's ${pointed.what} points at line ${pointed.line}`;
  }
  const message = f?.pointers.find((x) => x.what.startsWith("holds the message"));
  if (message !== undefined) {
    const said = /"(.*)"/.exec(message.what)?.[1] ?? "";
    const at = lines.find(([, text]) => said !== "" && text.includes(said))?.[0];
    const around = at === undefined ? null : enclosing(spans, at);
    return `${verb} ${around !== null ? `\`${around.name}\` (${formatSpan(around.start, around.end)})` : "the code"} where it reports "${said}"${at !== undefined ? ` (line ${at})` : ""}`;
  }
  for (const name of p.intent.names) {
    const declared = declarationsOf(path, lines, name).find((d) => d.text !== "");
    if (declared === undefined) continue;
    const span = spans.find((s) => s.start === declared.line);
    const range = span !== undefined ? formatSpan(span.start, span.end) : `line ${declared.line}`;
    return `${verb} \`${name}\` (${range}${declared.within ? `, in \`${declared.within}\`` : ""}) — \`${declared.text}\``;
  }
  return null;
}

/** A parameter typed by an options type: `opt?: CookieOptions`, `options: CORSOptions`. */
const OPTIONS_PARAM = /\b([A-Za-z_$][\w$]*)\??\s*:\s*([A-Z][\w$]*Options)\b/;

/**
 * How a function already takes the option a task asks for: as a parameter of its own
 * (`prefix?: CookiePrefixOptions` of `getCookie`), or through an options type it takes whose
 * declaration the repository already has (`opt?: CookieOptions`, with `maxAge?: number` in
 * `CookieOptions`). Null when its signature shows neither.
 *
 * @example
 * takenOption("export const getCookie = (c, key?, prefix?: CookiePrefixOptions) => {", "prefix", [])
 * // { param: "prefix?: CookiePrefixOptions", declared: null }
 */
export function takenOption(
  signature: string,
  option: string,
  existing: readonly Existing[],
): { param: string; declared: ({ path: string } & Declaration) | null } | null {
  const own = new RegExp(`[(,]\\s*(${escaped(option)}\\??\\s*(?::[^,)=]+|=[^,)]+))`).exec(
    signature,
  );
  if (own !== null) return { param: own[1]!.trim(), declared: null };
  const typed = OPTIONS_PARAM.exec(signature);
  if (typed === null) return null;
  const places = existing.find((e) => e.asOption)?.places ?? [];
  const declared = places.find((x) => x.within === typed[2]);
  return declared === undefined ? null : { param: typed[0], declared };
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The symbols and lines of a note, as a list line names them. */
function placeOf(n: FileNote): string {
  const symbols = symbolList(n);
  if (symbols) return symbols;
  const first = n.mentions[0];
  if (first === undefined) return "";
  return `${first.symbol ? `\`${first.symbol}\` ` : ""}(${formatLines(first.lines)})`;
}

/**
 * The ordered steps: a migration first, then each file to change by its role (types, code,
 * registration, docs) with what the evidence says to do there, new files where they are
 * wired in, the existing option to follow, the test case to put a new one beside, and the
 * verification commands.
 */
export function planSteps(p: PlanFacts): string[] {
  const out: string[] = [];
  const { list } = p;
  const isMigration = (n: { why: string }) => /\bmigration\b/.test(n.why);
  for (const n of list.newFiles.filter(isMigration)) out.push(`Create \`${n.path}\` — ${n.why}.`);
  const registrars = new Set(list.registrar.values());
  const order = (path: string) => {
    const role = p.note(path).role;
    return role === "declaration" ? 0 : registrars.has(path) ? 2 : role === "docs" ? 3 : 1;
  };
  const files = [...list.changes].sort((a, b) => order(a) - order(b));
  const newCode = list.newFiles.filter((x) => !isMigration(x) && !/feedback/.test(x.why));
  for (const path of files) {
    if (registrars.has(path) && newCode.length > 0) {
      for (const n of newCode) out.push(`Create \`${n.path}\` — ${n.why}.`);
      newCode.length = 0;
    }
    const action = fileAction(p, path, false);
    if (/^(ranked by the search|the task's .* appear here)/.test(action)) continue;
    out.push(`${capitalised(action)} — in \`${path}\`.`);
  }
  for (const n of newCode) out.push(`Create \`${n.path}\` — ${n.why}.`);
  for (const n of list.newFiles.filter((x) => /feedback/.test(x.why)))
    out.push(`Create \`${n.path}\` (${n.why}).`);
  const follow = exampleToFollow(p);
  if (follow !== null) out.push(follow);
  const code = list.changes.find((x) => pathKind(x) === "source");
  if (list.missing.some((m) => m.kind === "docs") && code !== undefined)
    out.push(
      `Document the change where its code is: the doc comments of ${symbolList(p.note(code)) || `\`${code}\``} — no docs page of the repository is about it.`,
    );
  out.push(...testSteps(p));
  if (p.hasCommands) out.push("Run the verification commands below and fix what fails.");
  return out;
}

/**
 * When the task adds an option the target does not have but another module does, that one is
 * the model to follow ("`trimTrailingSlash` already has a `skip` option").
 */
function exampleToFollow(p: PlanFacts): string | null {
  const option = p.existing.find((e) => e.asOption);
  if (option === undefined || p.intent.kind !== "add") return null;
  const target = p.list.changes[0];
  if (target === undefined) return null;
  // A place the target has, or reaches through what it imports (the options type its function
  // takes), is the option itself, not a model: "model it on the one it already has" is circular.
  const reach = new Set([target, ...(p.byPath.get(target)?.imports ?? [])]);
  if (option.places.some((x) => reach.has(x.path))) return null;
  const other = option.places.find((x) => pathKind(x.path) === "source");
  if (other === undefined) return null;
  return `Model \`${option.name}\` on the one \`${other.path}\` already has (line ${other.line}${other.within ? `, in \`${other.within}\`` : ""}${other.text ? `: \`${other.text}\`` : ""}) — same name, same shape.`;
}

/** The test steps: the case to put a new one beside, or where a missing test goes. */
function testSteps(p: PlanFacts): string[] {
  const out: string[] = [];
  // "Leave the tests out": no step writes one.
  if (p.list.dropped.has("tests")) return out;
  const about = [...(p.intent.option !== null ? [p.intent.option] : []), ...p.intent.names];
  for (const source of p.list.changes.slice(0, 2)) {
    const test = testsOf(p, source)[0];
    if (test === undefined) {
      if (source === p.list.changes[0] && pathKind(source) === "source") {
        const beside = siblingTestName(source, p.k);
        if (beside !== null && !p.list.newFiles.some((n) => n.path === beside))
          out.push(
            `Add \`${beside}\` for \`${source}\`: no test sits beside it, and its neighbours' tests are named that way.`,
          );
      }
      continue;
    }
    const lines = p.k.texts.get(test);
    const cases = lines === undefined ? [] : testCases(test, lines);
    const close = closestCase(cases, about.length > 0 ? about : p.intent.names);
    const group = cases.find((c) => c.group);
    const what =
      about.length > 0
        ? ` with a case for \`${about[0]!.replace(/^-+/, "")}\``
        : " with a case for the change";
    out.push(`Extend \`${test}\`${what}${besideText(close ?? group ?? cases[0] ?? null)}.`);
  }
  if (out.length === 0 && p.tests.length > 0)
    out.push(
      `Cover the change in the tests: ${p.tests
        .slice(0, 3)
        .map((t) => `\`${t}\``)
        .join(", ")}.`,
    );
  return out;
}

function besideText(c: TestCase | null): string {
  if (c === null) return "";
  return c.group
    ? `, inside \`${c.name}\` (line ${c.line})`
    : `, beside \`${c.name}\` (line ${c.line})`;
}

/**
 * The name a new test beside `source` would have, when its folder's other files have tests
 * named one way (`x.test.ts` beside `x.ts`); null when the folder shows no convention.
 */
function siblingTestName(source: string, k: Knowledge): string | null {
  const dir = dirOf(source);
  const ext = extensionOf(source);
  const beside = [...k.known].filter((path) => dirOf(path) === dir && pathKind(path) === "test");
  const marker = beside
    .map((path) => /\.(test|spec)\.[^.]+$/.exec(path)?.[1])
    .find((m) => m !== undefined);
  if (marker === undefined) return null;
  return `${dir === "" ? "" : `${dir}/`}${fileStem(source)}.${marker}${ext}`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
