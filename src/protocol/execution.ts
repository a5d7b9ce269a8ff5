import { z } from "zod";

/**
 * The command executor's wire shapes: what the session (the worker) asks of the place commands
 * run — a container per executing session — and what it answers. One HTTP API, spoken by two
 * servers: the command server inside the container image (Cloudflare Containers in
 * production), and the local executor on the user's machine that drives Docker for the
 * embedded worker and `wrangler dev`. docs/EXECUTION.md tells the whole story.
 *
 * Routes (JSON unless said; errors are `{"error": {"code", "message"}}`):
 *
 * - `GET  /v1/health` → 200 {@link ExecutorHealth} with `ok: true`, or 503 with `ok: false` and
 *   the sentence a user acts on ("Docker is not available: …").
 * - `PUT  /v1/sessions/:id/workspace` — body: an uncompressed tar of the working tree (the
 *   snapshot with the overlay's edits) → 204. Starts the session's container if needed and
 *   replaces its workspace.
 * - `POST /v1/sessions/:id/run` — body {@link RunRequest} → 200 {@link RunResult}; 409
 *   `workspace_missing` when the session has no workspace (never sent, or its container was
 *   reaped): the caller sends the workspace and asks again.
 * - `DELETE /v1/sessions/:id` → 204, idempotent: stops and removes the session's container.
 *
 * The local executor asks for `Authorization: Bearer <token>` on every route.
 */

/** `Bash`'s default timeout, as in Claude Code. */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
/** The longest timeout a `Bash` call may ask for. */
export const BASH_MAX_TIMEOUT_MS = 600_000;
/**
 * How much of each stream (stdout, stderr) a tool result keeps, in bytes: the head, cut at a
 * line end where one is near, with a sentence saying how much was left out.
 */
export const OUTPUT_LIMIT_BYTES = 30_000;
/** A file a command wrote larger than this is not carried into the session's changes. */
export const CHANGE_MAX_BYTES = 1_048_576;
/** The longest command accepted. */
export const COMMAND_MAX_CHARS = 100_000;

/** The overlay's edits the workspace must hold before a command runs: `null` = deleted. */
export const WorkspaceFile = z.object({
  path: z.string().min(1),
  content: z.string().nullable(),
});
export type WorkspaceFile = z.infer<typeof WorkspaceFile>;

export const RunRequest = z.object({
  command: z.string().min(1).max(COMMAND_MAX_CHARS),
  timeout_ms: z.number().int().min(1).max(BASH_MAX_TIMEOUT_MS),
  /** Written into the workspace (or deleted) before the command runs. */
  files: z.array(WorkspaceFile),
});
export type RunRequest = z.infer<typeof RunRequest>;

/** One stream of a command's output, cut at {@link OUTPUT_LIMIT_BYTES}. */
export const CommandOutput = z.object({
  /** The kept head, as UTF-8 text. */
  text: z.string(),
  /** How many bytes the command wrote to this stream in all. */
  bytes: z.number().int().min(0),
  /** Whether `text` is less than all of it. */
  cut: z.boolean(),
});
export type CommandOutput = z.infer<typeof CommandOutput>;

/**
 * A file the command created, changed or deleted (as git sees the tree: ignored files are not
 * changes). `content` is the new UTF-8 text; a file that is not text, or is larger than
 * {@link CHANGE_MAX_BYTES}, carries `skipped` instead and is not part of the session's changes.
 */
export const FileChange = z.object({
  path: z.string().min(1),
  kind: z.enum(["created", "modified", "deleted"]),
  content: z.string().optional(),
  skipped: z.enum(["binary", "too_large"]).optional(),
});
export type FileChange = z.infer<typeof FileChange>;

export const RunResult = z.object({
  /** The exit code; null when a signal or the timeout ended the command. */
  exit_code: z.number().int().nullable(),
  /** Whether the timeout stopped it (its whole process group was killed). */
  timed_out: z.boolean(),
  duration_ms: z.number().int().min(0),
  stdout: CommandOutput,
  stderr: CommandOutput,
  /** What the command did to the tree, sorted by path. */
  changes: z.array(FileChange),
});
export type RunResult = z.infer<typeof RunResult>;

export const ExecutorHealth = z.object({
  ok: z.boolean(),
  /** Where commands run: `docker` (local) or `cloudflare` (Cloudflare Containers). */
  executor: z.string(),
  /** When not ok: why, in a sentence a user can act on. */
  reason: z.string().optional(),
  /** The image commands run in, when known. */
  image: z.string().optional(),
});
export type ExecutorHealth = z.infer<typeof ExecutorHealth>;

/** Executor error codes beyond the API's usual ones. */
export const EXECUTOR_ERRORS = {
  workspaceMissing: "workspace_missing",
  unavailable: "executor_unavailable",
} as const;

/**
 * The last test run of a remote execution, as the Session shows it (`last_test_run`): the last
 * `Bash` command that ran a test suite ({@link isTestCommand}), and how it ended.
 */
export const LastTestRunSchema = z.object({
  command: z.string(),
  /** null when a signal or the timeout ended it. */
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number().int().min(0),
  /** ISO time it finished. */
  at: z.string(),
});
export type LastTestRun = z.infer<typeof LastTestRunSchema>;

/**
 * Test runners a command may start, by the words that start them (after `cd …&&`, env
 * assignments or `npx`): what makes a `Bash` call a test run for {@link LastTestRun}.
 */
const TEST_COMMANDS: readonly RegExp[] = [
  /^(npm|pnpm|yarn|bun)\s+(run\s+)?(test|t)\b/,
  /^(npm|pnpm|yarn|bun)\s+run\s+[\w:.-]*test[\w:.-]*\b/,
  /^(npx\s+|bunx\s+)?(vitest|jest|mocha|ava|tap|playwright\s+test)\b/,
  /^node\s+(--[\w-]+\s+)*--test\b/,
  /^(python3?\s+-m\s+)?(pytest|unittest|tox|nox)\b/,
  /^(go|cargo|dotnet|mix|swift|zig)\s+test\b/,
  /^(mvn|\.\/mvnw)\b.*\b(test|verify)\b/,
  /^(gradle|\.\/gradlew)\b.*\b(test|check)\b/,
  /^(make|just|rake)\b.*\b(test|tests|check|spec)\b/,
  /^(bundle\s+exec\s+)?(rspec|phpunit|ctest)\b/,
];

/**
 * Whether a command runs a test suite: each part of a `&&`/`;` chain is tried, past `cd`,
 * variable assignments and `timeout N`.
 *
 * @example
 * isTestCommand("cd app && CI=1 npm test -- --run") // → true
 * isTestCommand("ls -la") // → false
 */
export function isTestCommand(command: string): boolean {
  return command
    .split(/&&|\|\||;|\n/)
    .map((part) =>
      part
        .trim()
        .replace(/^(\w+=\S*\s+)+/, "")
        .replace(/^timeout\s+\S+\s+/, ""),
    )
    .some((part) => !/^cd\s/.test(part) && TEST_COMMANDS.some((p) => p.test(part)));
}

/**
 * The last test run in a sentence, for the review page and `planport status`.
 *
 * @example
 * testRunSentence({ command: "npm test", exit_code: 0, timed_out: false, duration_ms: 1200, at: "…" })
 * // → "`npm test` passed (exit code 0, 1.2 s)"
 */
export function testRunSentence(run: LastTestRun): string {
  const took = `${(run.duration_ms / 1000).toFixed(1)} s`;
  const how = run.timed_out
    ? `timed out after ${took} and was stopped`
    : run.exit_code === 0
      ? `passed (exit code 0, ${took})`
      : run.exit_code === null
        ? `was ended by a signal (${took})`
        : `failed (exit code ${run.exit_code}, ${took})`;
  return `\`${run.command.length > 200 ? `${run.command.slice(0, 200)}…` : run.command}\` ${how}`;
}
