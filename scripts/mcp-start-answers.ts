import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { lazyConnection } from "../local-client/mcp/connection.ts";
import type { McpStartAnswers } from "../local-client/mcp/early-answers.ts";
import { createPlanportMcpServer } from "../local-client/mcp/server.ts";

/**
 * What `planport mcp` answers to `initialize` and `tools/list`, asked of the real server (no
 * worker is reached: neither request needs one). The build records it in the command, which
 * sends it before the SDK has loaded (local-client/mcp/early-answers.ts).
 *
 * @example
 * const answers = await mcpStartAnswers(); // answers.toolsList.tools[0].name → "plan"
 */
export async function mcpStartAnswers(): Promise<McpStartAnswers> {
  const shutdown = new AbortController();
  const server = createPlanportMcpServer({
    connection: lazyConnection({}, {}),
    cwd: process.cwd(),
    env: {},
    shutdown: shutdown.signal,
  });
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  const results = new Map<unknown, unknown>();
  client.onmessage = (message: JSONRPCMessage) => {
    if ("id" in message && "result" in message) results.set(message.id, message.result);
    if ("id" in message && "error" in message) {
      throw new Error(`the MCP server refused ${JSON.stringify(message)}`);
    }
  };
  await server.connect(serverSide);
  await client.start();
  await client.send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "planport-build", version: "0" },
    },
  });
  await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await client.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  for (let i = 0; i < 100 && results.size < 2; i++) await new Promise((r) => setTimeout(r, 10));
  await server.close();
  shutdown.abort();
  const initialize = results.get(1) as Record<string, unknown> | undefined;
  const toolsList = results.get(2);
  if (initialize === undefined || toolsList === undefined) {
    throw new Error("the MCP server did not answer initialize and tools/list");
  }
  return {
    supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    latestVersion: LATEST_PROTOCOL_VERSION,
    initialize,
    toolsList,
  };
}
