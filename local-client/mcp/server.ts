import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ConnectionHolder } from "./connection.ts";
import { startPlan } from "./plan-tool.ts";
import { listSessions, pullChanges, sessionStatus, stopSession } from "./session-tools.ts";
import {
  LIST_ARGS,
  PLAN_ARGS,
  PULL_ARGS,
  SESSION_ARGS,
  TOOL_DESCRIPTIONS,
  WAIT_ARGS,
} from "./tools.ts";
import { type Progress, waitForPlan } from "./wait.ts";

/**
 * The planport MCP server (CONTRACT "Extensions" → "CLI" → `mcp`): six tools over one
 * connection to the planport worker. Transport-free: `planport mcp` (stdio.ts) connects it to
 * stdio; a test can connect it to anything.
 */

export const MCP_SERVER_NAME = "planport";
const MCP_SERVER_VERSION = "0.1.0";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Progress notifications for one call, when the client asked for them (it sent a
 * `progressToken`). Each carries a larger `progress`, as the protocol requires.
 */
function progressOf(extra: Extra): Progress {
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => {};
  let step = 0;
  return (message) => {
    step += 1;
    extra
      .sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: step, message },
      })
      .catch(() => {});
  };
}

export interface PlanportMcpOptions {
  connection: ConnectionHolder;
  /** The default repository (`plan`) and apply target (`pull_changes`). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Aborted when the server shuts down: waits stop and save where they got to. */
  shutdown: AbortSignal;
}

/**
 * @example
 * const server = createPlanportMcpServer({ connection, cwd: process.cwd(), env: process.env, shutdown });
 * await server.connect(new StdioServerTransport());
 */
export function createPlanportMcpServer(opts: PlanportMcpOptions): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    {
      instructions:
        "planport offloads planning to a remote Plan Mode session the user reviews in the browser. " +
        "Call plan with the task, show the user the review link it returns, then call wait_for_plan with the session id " +
        "(again whenever it returns still waiting) until the plan is sent to terminal (teleported here) — then implement it in this conversation.",
    },
  );
  const { connection, cwd, env } = opts;
  const waiting = new Set<string>();
  const signalOf = (extra: Extra) => AbortSignal.any([extra.signal, opts.shutdown]);

  server.registerTool(
    "plan",
    {
      title: "Offload planning to planport",
      description: TOOL_DESCRIPTIONS.plan,
      inputSchema: PLAN_ARGS,
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
    (args, extra) => startPlan(args, { connection, cwd, env, signal: signalOf(extra) }),
  );
  server.registerTool(
    "wait_for_plan",
    {
      title: "Wait for the reviewed plan",
      description: TOOL_DESCRIPTIONS.wait_for_plan,
      inputSchema: WAIT_ARGS,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args, extra) =>
      waitForPlan(args, {
        connection,
        waiting,
        signal: signalOf(extra),
        progress: progressOf(extra),
        cwd,
        env,
      }),
  );
  server.registerTool(
    "status",
    {
      title: "Show a planport session",
      description: TOOL_DESCRIPTIONS.status,
      inputSchema: SESSION_ARGS,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) => sessionStatus(args.session_id, { connection, cwd }),
  );
  server.registerTool(
    "list",
    {
      title: "List planport sessions",
      description: TOOL_DESCRIPTIONS.list,
      inputSchema: LIST_ARGS,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) => listSessions(args.limit, { connection, cwd }),
  );
  server.registerTool(
    "stop",
    {
      title: "Stop a planport session",
      description: TOOL_DESCRIPTIONS.stop,
      inputSchema: SESSION_ARGS,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    (args) => stopSession(args.session_id, { connection, cwd }),
  );
  server.registerTool(
    "pull_changes",
    {
      title: "Fetch a remote execution's changes",
      description: TOOL_DESCRIPTIONS.pull_changes,
      inputSchema: PULL_ARGS,
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
    (args) => pullChanges(args, { connection, cwd }),
  );
  return server;
}
