/**
 * Which repository files a plan names, in the order it first names them: the part of a plan
 * the benchmark scores. The reader itself is the product's (src/protocol/plan-paths.ts), so the
 * benchmark scores plans exactly as the review page and `planport status` read them.
 */
export {
  filesLeadingLines,
  filesNamedByPlan,
  type NamedFile,
} from "../../../src/protocol/plan-paths.ts";
