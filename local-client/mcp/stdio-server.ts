import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type ConnectionHolder, lazyConnection } from "./connection.ts";
import { createPlanportMcpServer } from "./server.ts";

/**
 * The MCP server of `planport mcp` on a pair of streams (stdio.ts gives it stdin and the real
 * stdout). Loaded once the command runs: the SDK, zod and the API client are what
 * `planport mcp` spends most of its start on, and the first answers need none of them
 * (early-answers.ts).
 */
export async function startStdioServer(opts: {
  flags: { server?: string; token?: string };
  input: Readable;
  output: Writable;
  shutdown: AbortSignal;
  onclose: () => void;
}): Promise<{ close(): Promise<void>; connection: ConnectionHolder }> {
  const connection = lazyConnection(opts.flags, process.env);
  const server = createPlanportMcpServer({
    connection,
    cwd: process.cwd(),
    env: process.env,
    shutdown: opts.shutdown,
  });
  const transport = new StdioServerTransport(opts.input, opts.output);
  transport.onclose = opts.onclose;
  await server.connect(transport);
  return { close: () => server.close(), connection };
}
