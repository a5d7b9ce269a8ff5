/**
 * The wire protocol shared by the worker and the local client: one zod schema per shape in
 * docs/PROTOCOL.md, the types inferred from them, and the markers. Imports nothing of ours.
 */
export * from "./blob-id.ts";
export * from "./decision-words.ts";
export * from "./errors.ts";
export * from "./events.ts";
export * from "./execution.ts";
export * from "./limits.ts";
export * from "./markers.ts";
export * from "./plan-paths.ts";
export * from "./questions.ts";
export * from "./readable-text.ts";
export * from "./repo-names.ts";
export * from "./requests.ts";
export * from "./result.ts";
export * from "./review-state.ts";
export * from "./server-proof.ts";
export * from "./session.ts";
export * from "./snapshot-manifest.ts";
export * from "./snapshot-rules.ts";
