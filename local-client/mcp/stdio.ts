import { Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { EXIT } from "../cli/exit-codes.ts";
import { terminalText } from "../terminal/text.ts";
import { lazyConnection } from "./connection.ts";
import { createPlanportMcpServer } from "./server.ts";

/**
 * `planport mcp`: the MCP server on stdio. stdout is the transport and carries nothing else:
 * the transport gets the real stdout, and `process.stdout.write` is pointed at stderr for as
 * long as the server runs, so a stray log line (ours or a library's) cannot corrupt the
 * protocol. Ends when the client closes stdin (or on SIGINT/SIGTERM), leaving the embedded
 * worker as a CLI command would.
 */
export async function runMcp(flags: { server?: string; token?: string }): Promise<number> {
  const stdout = process.stdout;
  const writeProtocol = stdout.write.bind(stdout);
  const protocolOut = new Writable({
    write(chunk, _encoding, callback) {
      writeProtocol(chunk, callback);
    },
  });
  const stderrWrite = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  stdout.write = stderrWrite;

  const shutdown = new AbortController();
  const connection = lazyConnection(flags, process.env);
  const server = createPlanportMcpServer({
    connection,
    cwd: process.cwd(),
    env: process.env,
    shutdown: shutdown.signal,
  });
  const transport = new StdioServerTransport(process.stdin, protocolOut);
  const closed = new Promise<void>((resolve) => {
    const done = () => resolve();
    // A client that stops reading (`planport mcp | head`, a crashed agent) closes the pipe: the
    // next write fails with EPIPE. The session is over, not a crash.
    const writeFailed = (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE")
        process.stderr.write(`planport mcp: ${terminalText(String(err))}\n`);
      done();
    };
    stdout.on("error", writeFailed);
    protocolOut.on("error", writeFailed);
    transport.onclose = done;
    process.stdin.once("end", done);
    process.stdin.once("close", done);
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  try {
    await server.connect(transport);
    await closed;
    return EXIT.ok;
  } catch (err) {
    process.stderr.write(`planport mcp: ${terminalText(String(err))}\n`);
    return EXIT.networkOrUnknown;
  } finally {
    shutdown.abort();
    await server.close().catch(() => {});
    await connection.close();
    stdout.write = writeProtocol;
  }
}
