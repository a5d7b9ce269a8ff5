import { PassThrough, Writable } from "node:stream";
import { EXIT } from "../cli/exit-codes.ts";
import { terminalText } from "../terminal/text.ts";
import {
  answeredAlready,
  type EarlyState,
  earlyAnswer,
  type McpStartAnswers,
  recordedAnswers,
} from "./early-answers.ts";

/**
 * `planport mcp`: the MCP server on stdio. stdout is the transport and carries nothing else:
 * the transport gets the real stdout, and `process.stdout.write` is pointed at stderr for as
 * long as the server runs, so a stray log line (ours or a library's) cannot corrupt the
 * protocol. Ends when the client closes stdin (or on SIGINT/SIGTERM), leaving the embedded
 * worker as a CLI command would.
 *
 * The built command answers `initialize` and `tools/list` before the server loads
 * (early-answers.ts): loading it blocks this process for a few hundred milliseconds, so it
 * starts once `tools/list` is answered, another message arrives, stdin ends, or
 * {@link LOAD_AFTER_MS} pass. The server (stdio-server.ts) then reads every message from the
 * start.
 */
const LOAD_AFTER_MS = 500;

export async function runMcp(flags: { server?: string; token?: string }): Promise<number> {
  const stdout = process.stdout;
  const writeProtocol = stdout.write.bind(stdout);
  const answered = new Set<string | number>();
  const protocolOut = new Writable({
    write(chunk, _encoding, callback) {
      if (answeredAlready(String(chunk), answered)) callback();
      else writeProtocol(chunk, callback);
    },
  });
  const stderrWrite = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  stdout.write = stderrWrite;

  const shutdown = new AbortController();
  const input = new PassThrough();
  const answers = recordedAnswers();
  let load = () => {};
  const loadNow = new Promise<void>((resolve) => {
    load = resolve;
  });
  if (answers === null) load();
  const loadTimer = setTimeout(load, LOAD_AFTER_MS);
  process.stdin.on("data", answers === null ? (d) => input.write(d) : answerEarly(answers));
  const stdinEnded = () => {
    if (!input.writableEnded) input.end();
    load();
  };
  process.stdin.once("end", stdinEnded);
  process.stdin.once("close", stdinEnded);

  function answerEarly(recorded: McpStartAnswers): (chunk: Buffer) => void {
    let state: EarlyState = "start";
    let buffered = "";
    return (chunk) => {
      input.write(chunk);
      if (state === "done") return;
      buffered += chunk.toString("utf8");
      let newline = buffered.indexOf("\n");
      while (newline !== -1 && state !== "done") {
        const line = buffered.slice(0, newline).replace(/\r$/, "");
        buffered = buffered.slice(newline + 1);
        const before = state;
        const next = earlyAnswer(line, recorded, state);
        state = next.state;
        if (next.id !== undefined && next.line !== undefined) {
          // Past the filter below, which drops the SDK's answer to the same id.
          writeProtocol(next.line);
          answered.add(next.id);
        }
        // Answered tools/list (in state "initialized"), or the SDK's turn.
        if (state === "done" || (next.line !== undefined && before === "initialized")) load();
        newline = buffered.indexOf("\n");
      }
    };
  }

  let onclose = () => {};
  const closed = new Promise<void>((resolve) => {
    const done = () => resolve();
    onclose = done;
    // A client that stops reading (`planport mcp | head`, a crashed agent) closes the pipe: the
    // next write fails with EPIPE. The session is over, not a crash.
    const writeFailed = (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE")
        process.stderr.write(`planport mcp: ${terminalText(String(err))}\n`);
      done();
    };
    stdout.on("error", writeFailed);
    protocolOut.on("error", writeFailed);
    // The end of stdin ends the server once it has read what came before (it may have
    // arrived before the server loaded).
    const ended = () => {
      if (input.readableEnded) done();
      else input.once("end", () => setImmediate(done));
    };
    process.stdin.once("end", ended);
    process.stdin.once("close", ended);
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  let server: Awaited<ReturnType<typeof import("./stdio-server.ts").startStdioServer>> | null =
    null;
  try {
    await Promise.race([loadNow, closed]);
    clearTimeout(loadTimer);
    const { startStdioServer } = await import("./stdio-server.ts");
    server = await startStdioServer({
      flags,
      input,
      output: protocolOut,
      shutdown: shutdown.signal,
      onclose: () => onclose(),
    });
    await closed;
    return EXIT.ok;
  } catch (err) {
    process.stderr.write(`planport mcp: ${terminalText(String(err))}\n`);
    return EXIT.networkOrUnknown;
  } finally {
    shutdown.abort();
    await server?.close().catch(() => {});
    await server?.connection.close();
    stdout.write = writeProtocol;
  }
}
