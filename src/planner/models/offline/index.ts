import type { ToolUseBlock } from "../../../protocol/index.ts";
import type { ModelRequest, ModelTurn, Planner } from "../types.ts";
import { draft } from "./draft.ts";
import { areaDirs, gatherKnowledge, manifestsToRead, steer } from "./knowledge.ts";
import { planMarkdown } from "./plan-writer.ts";
import { areaQuestion, chooseFiles, rank } from "./selection.ts";
import { wordStartPattern } from "./terms.ts";
import { OFFLINE_ID_PREFIX, readTranscript } from "./transcript.ts";

/** Lines read from each candidate (line references come from these). */
const READ_LIMIT_LINES = 400;
/** Read rounds per planning cycle (a second one follows candidates the first round's imports promoted). */
const MAX_READ_ROUNDS = 2;
const MAX_SEARCH_HITS = 1_000;

export const OFFLINE_MODEL = "planport-offline";

/**
 * The embedded default planner: deterministic, no model. It is "a model" behind the same
 * interface — it reads the conversation and answers with tool calls — so everything it learns
 * comes through the same tools and permission check as any model's calls. Each reply does the
 * next missing piece of work:
 *
 * 1. survey the root (LS); 2. read manifests and the README, count files per top-level area;
 * 3. search each term from the task (Grep count, Glob on paths); 4. rank files by evidence —
 * when nothing matches, ask ONE clarifying question with the areas as options; 5. read the top
 * candidates (imports between them re-rank); 6. write the plan file and call ExitPlanMode.
 * After a rejection the feedback's terms and named files feed the same steps, and a revised
 * plan follows. It cannot execute plans (`canExecuteRemotely: false`).
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
          use(id("manifest", i), "Read", { file_path: p, limit: READ_LIMIT_LINES }),
        ),
        ...areas.map((d, i) => use(id("area", i), "Glob", { pattern: `${d}/**` })),
      ],
    );
  }

  // 3. Search each term once (content hits and path names).
  const steering = steer(t, k);
  const unsearched = steering.terms.filter((term) => !k.searches.has(term.text));
  if (unsearched.length > 0) {
    return calls(
      `Offline planner: searching for ${unsearched.map((x) => `"${x.text}"`).join(", ")}.`,
      unsearched.flatMap((term) => [
        use(id("grep", term.text), "Grep", {
          // Where a word or identifier part starts, so a stem never matches mid-word.
          pattern: wordStartPattern(term.text),
          output_mode: "count",
          head_limit: MAX_SEARCH_HITS,
        }),
        use(id("glob", term.text), "Glob", {
          pattern: `{**/*${caseless(term.text)}*,**/*${caseless(term.text)}*/**}`,
        }),
      ]),
    );
  }

  // 4. Rank; when nothing matches, ask which area to focus on (once).
  const ranking = rank(k, steering);
  const sources = ranking.filter((f) => !f.isTest);
  if (sources.length === 0 && steering.scope === null && k.question === null) {
    const question = areaQuestion(t, k, steering);
    if (question !== null)
      return calls("Offline planner: the task matches no file, so I need to know where to look.", [
        use(id("ask", 0), "AskUserQuestion", question),
      ]);
  }

  // 5. Read the chosen files (a second round follows files the imports promoted).
  const chosen = chooseFiles(ranking, k, steering);
  const unread = [...chosen.changes, ...chosen.tests, ...steering.unknownNamed].filter(
    (p) => !k.attempted.has(p),
  );
  const rounds = new Set(
    t.calls.filter((c) => c.kind === "read" && c.message > lastInput).map((c) => c.message),
  ).size;
  if (unread.length > 0 && rounds < MAX_READ_ROUNDS) {
    return calls(
      `Offline planner: reading the top candidates (${unread.length}).`,
      unread.map((p, i) => use(id("read", i), "Read", { file_path: p, limit: READ_LIMIT_LINES })),
    );
  }

  // 6. Write the plan and ask for review.
  const plan = planMarkdown(draft(t, k, steering, ranking, chosen));
  const revision = t.calls.filter((c) => c.kind === "write").length + 1;
  return calls(
    `Offline planner: ${revision > 1 ? `revision ${revision} of the plan` : "the plan"} is written to ${request.context.planPath}; asking for review.`,
    [
      use(id("write", 0), "Write", { file_path: request.context.planPath, content: plan }),
      use(id("exit", 0), "ExitPlanMode", {}),
    ],
  );
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

/** A glob fragment matching the term in any letter case: "auth" → "[aA][uU][tT][hH]". */
function caseless(term: string): string {
  return [...term]
    .map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c))
    .join("");
}
