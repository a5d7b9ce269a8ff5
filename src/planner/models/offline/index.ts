import type { ToolUseBlock } from "../../../protocol/index.ts";
import type { ModelRequest, ModelTurn, Planner } from "../types.ts";
import { definitionSearch } from "./definitions.ts";
import { draft, listing } from "./draft.ts";
import { probeNames, probePatterns } from "./evidence.ts";
import { importersSearch } from "./imports.ts";
import {
  areaDirs,
  fileCount,
  gatherKnowledge,
  type Knowledge,
  manifestsToRead,
  searchOf,
} from "./knowledge.ts";
import { planMarkdown } from "./plan-writer.ts";
import type { RankedFile } from "./ranking.ts";
import { draftOutline, missingPathQuestions } from "./seed.ts";
import {
  areaGlob,
  areaQuestion,
  type Chosen,
  caseless,
  chooseFiles,
  MAX_LISTED,
  moduleNames,
  rank,
} from "./selection.ts";
import { type Steering, steer } from "./steering.ts";
import { escapeRegExp, searchPattern, type Term } from "./terms.ts";
import { testGlobs, testPairing } from "./tests.ts";
import { OFFLINE_ID_PREFIX, readTranscript, type Transcript } from "./transcript.ts";

/** Lines read from each candidate (line references and imports come from these). */
const READ_LIMIT_LINES = 1_500;
/**
 * Lines read from a manifest or the README: as many as Read gives (its 100,000 characters
 * bound the rest). hono's package.json is 706 lines, its scripts near the top; a cut at 400
 * lines left JSON that did not parse, and the plan found no name and no test command.
 */
const MANIFEST_LIMIT_LINES = 2_000;
/** Candidates read in the first round: the listed files and a few behind them. */
const READ_FIRST_ROUND = MAX_LISTED + 2;
/** Read rounds per planning cycle (a second one follows files the first round's imports promoted). */
const MAX_READ_ROUNDS = 2;
/** Grep's entry cap, the most one call may ask for. */
const MAX_SEARCH_HITS = 1_000;
/** Terms one definitions search covers (three spellings each stay within Grep's literal prefilter). */
const TERMS_PER_DEFINITION_SEARCH = 5;
/** A term in more than this share of files is too common for its definitions to say much. */
const DEFINITIONS_MAX_SHARE = 0.5;
/** Longest pattern Grep accepts. */
const MAX_PATTERN_CHARS = 1_000;
/** Candidates whose importers are searched for. */
const IMPORTERS_OF = 6;
/** Longest Glob pattern the pairs search builds (Glob accepts 1,000 characters). */
const MAX_GLOB_CHARS = 950;

export const OFFLINE_MODEL = "planport-offline";

/**
 * The embedded default planner: deterministic, no model. It is "a model" behind the same
 * interface — it reads the conversation and answers with tool calls — so everything it learns
 * comes through the same tools and permission check as any model's calls. Each reply does the
 * next missing piece of work:
 *
 * 1. survey the root (LS); 2. read manifests and the README, count files per top-level area;
 * 3. search each term from the task (Grep count where a word starts, Glob on paths) and the
 * `area:` hint's folder; 4. search the definitions of the terms (one Grep per few terms, in
 * content mode: which files *define* them); 5. rank files by evidence — when nothing matches,
 * ask ONE clarifying question with the areas as options; 6. read the top candidates, find who
 * imports them and which tests are named after them (the import graph re-ranks; a second
 * round reads what it promoted); 7. write the plan file and call ExitPlanMode. After a
 * rejection the feedback's terms, named files and commented passages feed the same steps, and
 * a revised plan follows that says what changed. It cannot execute plans
 * (`canExecuteRemotely: false`).
 *
 * Scans of the whole snapshot are what costs at scale (~0.3 s each at 20,000 files), so there
 * is one per term, one per five terms for definitions and one for importers; everything else
 * reads single files or path lists.
 */
export function offlinePlanner(): Planner {
  return {
    name: "offline",
    canExecuteRemotely: false,
    async next(request: ModelRequest): Promise<ModelTurn> {
      return nextTurn(request);
    },
  };
}

function nextTurn(request: ModelRequest): ModelTurn {
  if (request.context.mode !== "plan") {
    return reply(
      "The offline planner cannot carry out plans in the cloud. Send the approved plan to your terminal instead.",
    );
  }
  const t = readTranscript(request.messages, request.inputs);
  if (t.teleported) return reply("The plan was sent to your terminal; this session stops here.");
  const serial = t.serial;
  const lastInput = t.inputs.length > 0 ? t.inputs[t.inputs.length - 1]!.message : 0;
  if (t.calls.some((c) => c.name === "ExitPlanMode" && c.message > lastInput)) {
    return reply("The plan is waiting for your review.");
  }
  const k = gatherKnowledge(t);
  const id = (kind: string, detail: string | number) =>
    `${OFFLINE_ID_PREFIX}${serial}_${kind}_${detail}`;

  // 1. Survey the root.
  if (k.root === null) {
    return calls("Offline planner: surveying the repository layout.", [
      use(id("ls", 0), "LS", { path: "/repo" }),
    ]);
  }

  // 2. Manifests, README and the size of each top-level area.
  const manifests = manifestsToRead(k).filter((p) => !k.attempted.has(p));
  const areas = k.areaSurveyDone ? [] : areaDirs(k);
  if (manifests.length > 0 || areas.length > 0) {
    return calls(
      "Offline planner: reading the manifests and README, and counting files per area.",
      [
        ...manifests.map((p, i) =>
          use(id("manifest", i), "Read", { file_path: p, limit: MANIFEST_LIMIT_LINES }),
        ),
        ...areas.map((d, i) => use(id("area", i), "Glob", { pattern: `${d}/**` })),
      ],
    );
  }

  // 3. What the task's text points at, asked of the repository at once: which of the names it
  // writes as code the repository holds (one probe for all of them), where the files it names
  // are, and which files hold the messages it quotes. The terms are chosen from the answers.
  const seed =
    request.context.seedPlan === undefined ? null : draftOutline(request.context.seedPlan);
  const s = steer(t, k, seed?.digest ?? null);
  if (!t.calls.some((c) => c.kind === "probe" || c.kind === "named")) {
    const evidence = evidenceCalls(s);
    if (evidence.length > 0)
      return calls(
        "Offline planner: looking up the names, files and messages the task mentions.",
        evidence.map(([kind, detail, name, input]) => use(id(kind, detail), name, input)),
      );
  }

  // 4. Search each term once (content hits and path names), and the area hint's files.
  const needsCount = (term: Term) => term.counted === undefined && searchOf(k, term)?.hits == null;
  const needsGlob = (term: Term) => (k.searches.get(term.text)?.pathMatches ?? null) === null;
  const unsearched = s.terms.filter((term) => needsCount(term) || needsGlob(term));
  const hint = k.hinted === null ? areaGlob(s.area) : null;
  if (unsearched.length > 0 || hint !== null) {
    return calls(
      `Offline planner: searching for ${unsearched.map((x) => `"${x.text}"`).join(", ") || "the area"}${hint !== null ? ` and the area "${s.area}"` : ""}.`,
      [
        ...unsearched.flatMap((term) => [
          ...(needsCount(term)
            ? [
                use(id("grep", term.text), "Grep", {
                  // Where a word or identifier part starts, so a stem never matches mid-word.
                  pattern: searchPattern(term),
                  output_mode: "count",
                  head_limit: MAX_SEARCH_HITS,
                }),
              ]
            : []),
          ...(needsGlob(term)
            ? [use(id("glob", term.text), "Glob", { pattern: pathGlob(term) })]
            : []),
        ]),
        ...(hint !== null ? [use(id("hint", 0), "Glob", { pattern: hint })] : []),
      ],
    );
  }

  // 5. Which files define the terms (the definitions index, a few terms per search).
  const groups = definitionGroups(s.terms, k);
  if (groups.length > 0) {
    return calls(
      `Offline planner: looking up where ${groups
        .flat()
        .map((x) => `"${x.text}"`)
        .join(", ")} ${groups.flat().length === 1 ? "is" : "are"} defined.`,
      groups.map((group, i) =>
        use(id("defs", `${i}_${group.map((x) => x.text).join(".")}`), "Grep", {
          pattern: definitionSearch(group),
          output_mode: "content",
          head_limit: MAX_SEARCH_HITS,
        }),
      ),
    );
  }

  // 6. Rank; when nothing matches, ask which area to focus on (once).
  const ranking = rank(k, s);
  const sources = ranking.filter((f) => !f.isTest);
  if (sources.length === 0 && s.scope === null && k.question === null) {
    const question = areaQuestion(t, k, s);
    if (question !== null)
      return calls("Offline planner: the task matches no file, so I need to know where to look.", [
        use(id("ask", 0), "AskUserQuestion", question),
      ]);
  }

  // 7. Read the candidates, find their importers and tests (a second round follows what the
  // first one promoted).
  const chosen = chooseFiles(ranking, k, s);
  const rounds = new Set(
    t.calls
      .filter((c) => FOCUS_KINDS.has(c.kind ?? "") && c.message > lastInput)
      .map((c) => c.message),
  ).size;
  if (rounds < MAX_READ_ROUNDS) {
    const focus = focusCalls(ranking, chosen, k, s, rounds === 0);
    if (focus.length > 0)
      return calls(
        `Offline planner: reading the top candidates and looking for their importers and tests.`,
        focus.map(([kind, name, input], i) => use(id(kind, i), name, input)),
      );
  }

  // 8. Write the plan and ask for review.
  const d = draft(t, k, s, ranking, chosen, previousListing(t, lastInput, seed?.digest ?? null));
  if (seed !== null) d.openQuestions.unshift(...missingPathQuestions(seed.digest, k.known));
  const plan = planMarkdown(d, request.context.variant, seed);
  const revision = t.calls.filter((c) => c.kind === "write").length + 1;
  return calls(
    `Offline planner: ${revision > 1 ? `revision ${revision} of the plan` : "the plan"} is written to ${request.context.planPath}; asking for review.`,
    [
      use(id("write", 0), "Write", { file_path: request.context.planPath, content: plan }),
      use(id("exit", 0), "ExitPlanMode", {}),
    ],
  );
}

/**
 * Terms whose definitions are still to be searched, in groups of a few: those some file
 * mentions or is named after, and not so common that definitions would say nothing.
 */
function definitionGroups(terms: readonly Term[], k: Knowledge): Term[][] {
  const total = Math.max(1, fileCount(k));
  const dfOf = (term: Term) => {
    const found = searchOf(k, term);
    return new Set([...(found?.hits?.keys() ?? []), ...(found?.pathMatches ?? [])]).size;
  };
  const eligible = terms
    .filter((term) => {
      // A term the probe counted whole has its definitions among the probe's lines already.
      if (k.defsSearched.has(term.text) || term.counted !== undefined) return false;
      const df = dfOf(term);
      return df > 0 && !searchOf(k, term)?.truncated && df / total <= DEFINITIONS_MAX_SHARE;
    })
    // Rare terms together, common ones after: a group's output is cut at Grep's cap, and a
    // common word's definition lines would crowd out a rare identifier's.
    .sort((a, b) => dfOf(a) - dfOf(b) || (a.text < b.text ? -1 : 1));
  const groups: Term[][] = [];
  for (const term of eligible) {
    const last = groups[groups.length - 1];
    if (
      last !== undefined &&
      last.length < TERMS_PER_DEFINITION_SEARCH &&
      definitionSearch([...last, term]).length <= MAX_PATTERN_CHARS
    )
      last.push(term);
    else groups.push([term]);
  }
  // A single identifier too long for one pattern is not searched for its definitions.
  return groups.filter((g) => definitionSearch(g).length <= MAX_PATTERN_CHARS);
}

const FOCUS_KINDS: ReadonlySet<string> = new Set(["read", "callers", "pairs"]);

type EvidenceCall = [
  kind: string,
  detail: string | number,
  tool: string,
  input: Record<string, unknown>,
];

/**
 * The first questions the task's text asks of the repository: one probe (Grep, content) for
 * every name it writes as code, one Glob for the file names it mentions (and short literals
 * that may name a file: `locale('sv')`), one Grep per quoted message.
 */
function evidenceCalls(s: Steering): EvidenceCall[] {
  const out: EvidenceCall[] = [];
  probePatterns(probeNames(s.evidence)).forEach((pattern, i) => {
    out.push([
      "probe",
      i,
      "Grep",
      { pattern, output_mode: "content", head_limit: MAX_SEARCH_HITS },
    ]);
  });
  const names = [
    ...s.evidence.paths.map((p) => p.text.slice(p.text.lastIndexOf("/") + 1)),
    ...s.evidence.literals.flatMap((l) => [`${l}.*`, `${l}`]),
  ].filter(
    (n, i, all) => n !== "" && !/[{},\\[\]*?]/.test(n.replace(/\.\*$/, "")) && all.indexOf(n) === i,
  );
  let pattern = "";
  for (const n of names) {
    const next = pattern === "" ? n : `${pattern},${n}`;
    if (next.length + 5 > MAX_GLOB_CHARS) break;
    pattern = next;
  }
  if (pattern !== "") out.push(["named", 0, "Glob", { pattern: `**/{${pattern}}` }]);
  s.evidence.messages.forEach((message, i) => {
    out.push([
      "message",
      i,
      "Grep",
      { pattern: escapeRegExp(message), output_mode: "count", head_limit: MAX_SEARCH_HITS },
    ]);
  });
  return out;
}

type FocusCall = [kind: string, tool: string, input: Record<string, unknown>];

/**
 * The first round: read the listed candidates and a few behind them, search for whoever
 * imports the strongest, and look for tests named after them. A later round reads only what
 * the imports promoted into the lists.
 */
function focusCalls(
  ranking: readonly RankedFile[],
  chosen: Chosen,
  k: Knowledge,
  s: Steering,
  first: boolean,
): FocusCall[] {
  const { changes, checks } = chosen;
  const tests = chosen.tests.filter((t) => changes.slice(0, 2).some((c) => testPairing(t, c) >= 2));
  const listed = [...changes, ...checks];
  const sources = ranking.filter((f) => !f.isTest).map((f) => f.path);
  // The second round also reads the tests of the first files to change: the steps name the
  // case to put a new one beside.
  const toRead = (
    first ? [...listed, ...sources].slice(0, READ_FIRST_ROUND) : [...listed, ...tests]
  )
    .concat(first ? s.unknownNamed : [])
    .filter((p, i, all) => all.indexOf(p) === i && !k.attempted.has(p));
  const out: FocusCall[] = toRead.map((p) => [
    "read",
    "Read",
    { file_path: p, limit: READ_LIMIT_LINES },
  ]);
  if (!first) return out;
  const modules = moduleNames(listed.slice(0, IMPORTERS_OF));
  if (modules.length > 0)
    out.push([
      "callers",
      "Grep",
      { pattern: importersSearch(modules), output_mode: "content", head_limit: MAX_SEARCH_HITS },
    ]);
  const globs: string[] = [];
  for (const p of listed) for (const g of testGlobs(p)) if (!globs.includes(g)) globs.push(g);
  let pattern = "";
  for (const g of globs) {
    const next = pattern === "" ? g : `${pattern},${g}`;
    if (next.length + 2 > MAX_GLOB_CHARS) break;
    pattern = next;
  }
  if (pattern !== "") out.push(["pairs", "Glob", { pattern: `{${pattern}}` }]);
  return out;
}

/** The previous plan's file lists, recomputed from the conversation as it was then. */
function previousListing(t: Transcript, lastInput: number, seed: string | null) {
  const writes = t.calls.filter((c) => c.kind === "write" && c.message < lastInput);
  if (writes.length === 0) return null;
  const at = writes[writes.length - 1]!.message;
  const before: Transcript = {
    ...t,
    calls: t.calls.filter((c) => c.message < at),
    inputs: t.inputs.filter((i) => i.message < at),
  };
  const k = gatherKnowledge(before);
  const s = steer(before, k, seed);
  const ranking = rank(k, s);
  return listing(k, s, ranking, chooseFiles(ranking, k, s));
}

/** A Glob for paths whose name contains the term, in any letter case. */
function pathGlob(term: Term): string {
  const c = caseless(term.text);
  return `{**/*${c}*,**/*${c}*/**}`;
}

function use(id: string, name: string, input: Record<string, unknown>): ToolUseBlock {
  return { type: "tool_use", id, name, input };
}

function calls(text: string, uses: ToolUseBlock[]): ModelTurn {
  return {
    content: [{ type: "text", text }, ...uses],
    usage: { input_tokens: 0, output_tokens: 0 },
    model: OFFLINE_MODEL,
  };
}

function reply(text: string): ModelTurn {
  return {
    content: [{ type: "text", text }],
    usage: { input_tokens: 0, output_tokens: 0 },
    model: OFFLINE_MODEL,
  };
}
