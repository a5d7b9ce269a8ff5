import type { DefinitionKind } from "../repository/definitions.ts";
import type { PathKind } from "../repository/paths.ts";

/**
 * What each piece of evidence is worth to the ranking (ranking.ts weighs with these): a
 * definition, a pointer, a path or folder name, coverage of several terms, the `area:` hint,
 * a comment's focus, the import graph's share, and how much each kind of file and of
 * definition counts. The numbers were set while tuning on the planner benchmark's tuning
 * repositories (docs/PLANNERS.md): each one moves plans, so measure a change there.
 */

export const DEFINITION_SCORE = 3;
/** A pointer of weight 1 to one file is worth this many units at full rarity. */
export const POINTER_SCORE = 4;
export const PATH_FILE_SCORE = 3;
export const PATH_FOLDER_SCORE = 1.2;
export const COVERAGE_BONUS = 0.35;
/** A term a file only mentions counts this much towards its coverage. */
export const MENTION_COVERAGE = 0.5;
/**
 * With more terms than {@link FEW_TERMS} (an issue's), only a term in at most this share of the
 * files is telling enough to count towards coverage; a subject's few terms all count.
 */
export const TELLING_SHARE = 0.15;
export const FEW_TERMS = 8;
export const AREA_FACTOR = 2.5;
export const FOCUS_FACTOR = 1.6;
export const FOCUS_FOLDER_FACTOR = 1.25;
export const IMPORT_SHARE = 0.35;
/** A file wired to more than this many candidates gets a smaller share from each. */
export const IMPORT_FANOUT = 4;
/** A term found in more than this share of files is damped like a cut-short search. */
export const COMMON_SHARE = 0.4;
export const COMMON_DAMPING = 0.25;
/** Candidates below this share of the best score are dropped. */
export const RELATIVE_FLOOR = 0.08;

/** How much each kind of file counts as a file to change. */
export const KIND_FACTOR: Record<PathKind, number> = {
  source: 1,
  test: 1,
  config: 0.45,
  docs: 0.12,
  changelog: 0.05,
  example: 0.15,
  bench: 0.15,
  other: 0.3,
  project: 0,
  generated: 0,
};

/** How much a definition of each kind says about where a change goes. */
export const DEFINITION_WEIGHT: Record<DefinitionKind, number> = {
  function: 1,
  method: 1,
  class: 1.1,
  type: 1,
  module: 0.8,
  constant: 0.7,
  route: 1,
  field: 0.5,
  key: 0.6,
};

/** What a definition is worth in a file that holds nothing of the word written beside it. */
export const DEFINED_ALONE_FACTOR = 0.4;
