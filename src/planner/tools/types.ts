import { z } from "zod";
import type { PermissionMode, SessionToolName } from "../../protocol/index.ts";
import type { WriteTarget } from "../permissions.ts";
import type { SessionPort } from "../port.ts";
import type { ScanLimit } from "./scan-budget.ts";
import type { Workspace } from "./workspace.ts";

/** What the model is told about a tool: its name, what it does, its input as JSON Schema. */
export interface ToolSpec {
  name: SessionToolName;
  description: string;
  input_schema: Record<string, unknown>;
}

/** What a tool may look at while it runs. */
export interface ToolContext {
  port: SessionPort;
  workspace: Workspace;
  mode: PermissionMode;
  planPath: string;
  /** The id of the call being run (its tool_use id). */
  callId?: string;
  /** Set when the permission check allowed a write: the one thing it may touch. */
  target?: WriteTarget;
  /**
   * What stops a Grep or Glob: wall time for a model's patterns (the default), counted work for
   * the offline planner's own, so its plan never depends on the machine's speed (scan-budget.ts).
   */
  scanLimit?: ScanLimit;
}

/**
 * What running a tool produced. Tools never write to the session themselves: a result's
 * `apply` performs its effect and runs inside the same transaction that appends the tool
 * result event, so the two land together or not at all. A wait opens a question or plan review
 * (no tool result until the user answers).
 */
export type ToolOutcome =
  | { kind: "result"; content: string; isError: boolean; apply?: () => void }
  | { kind: "wait"; wait: { kind: "question" | "plan"; input: Record<string, unknown> } };

export interface Tool {
  readonly spec: ToolSpec;
  run(input: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}

/**
 * A successful tool result; `apply` (if any) is its effect, run in the result's transaction.
 *
 * @example
 * return ok("File created", () => port.writeOverlay(path, text));
 */
export function ok(content: string, apply?: () => void): ToolOutcome {
  return apply
    ? { kind: "result", content, isError: false, apply }
    : { kind: "result", content, isError: false };
}

/**
 * An error tool result (the model sees it with `is_error`).
 *
 * @example
 * return fail("File does not exist: /repo/x.ts");
 */
export function fail(content: string): ToolOutcome {
  return { kind: "result", content, isError: true };
}

/**
 * Formats a zod failure as one sentence per problem, naming the field, for the model to fix.
 *
 * @example
 * describeInvalidInput("Read", parsed.error) // "InputValidationError: Read was called with invalid input …"
 */
export function describeInvalidInput(tool: string, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "input";
    return `${where}: ${issue.message}`;
  });
  return `InputValidationError: ${tool} was called with invalid input and did not run.\n${problems.map((p) => `- ${p}`).join("\n")}`;
}

/**
 * JSON Schema for the model, from a zod schema (without the `$schema` key some providers reject).
 *
 * @example
 * modelSchema(ReadInput) // { type: "object", properties: { file_path: … } }
 */
export function modelSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input" });
  return rest;
}
