import type { ToolUseBlock } from "../../../protocol/index.ts";
import type { ModelRequest, ModelTurn, Planner } from "../types.ts";
import { draft } from "./draft/draft.ts";
import { listing } from "./draft/listing.ts";
import { planMarkdown } from "./draft/plan-writer.ts";
import { draftOutline, missingPathQuestions } from "./draft/seed.ts";
import { steer } from "./feedback/steering.ts";
import { areaGlob, areaQuestion, chooseFiles, rank } from "./rank/selection.ts";
import { definitionSearch } from "./repository/definitions.ts";
import { areaDirs, gatherKnowledge, manifestsToRead, searchOf } from "./repository/knowledge.ts";
import {
  definitionGroups,
  evidenceCalls,
  FOCUS_KINDS,
  focusCalls,
  MAX_SEARCH_HITS,
  pathGlob,
} from "./searches.ts";
import { searchPattern, type Term } from "./task/terms.ts";
import { OFFLINE_ID_PREFIX, readTranscript, type Transcript } from "./transcript.ts";

/**
 * Lines read from a manifest or the README: as many as Read gives (its 100,000 characters
 * bound the rest). hono's package.json is 706 lines, its scripts near the top; a cut at 400
 * lines left JSON that did not parse, and the plan found no name and no test command.
 */
const MANIFEST_LIMIT_LINES = 2_000;
/** Read rounds per planning cycle (a second one follows files the first round's imports promoted). */
const MAX_READ_ROUNDS = 2;
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
 * Each reply reads the conversation back (transcript.ts: the planner keeps no other state) and
 * goes through the stages, a folder each, every one importing only those before it: task/
 * (the task's words) → repository/ (what the calls found) → feedback/ (what the reviewer's
 * inputs mean) → rank/ (the files, best first) → draft/ (the plan). searches.ts turns what is
 * still missing into the next tool calls.
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

/** The previous plan's file lists and steering, recomputed from the conversation as it was then. */
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
  return { listing: listing(k, s, ranking, chooseFiles(ranking, k, s)), steering: s };
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
