import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { answeredAlready, earlyAnswer } from "../../local-client/mcp/early-answers.ts";
import { mcpStartAnswers } from "../../scripts/mcp-start-answers.ts";
import { isolatedHome, PLANPORT_BIN } from "./run-cli.ts";

/**
 * `planport mcp` answers `initialize` and `tools/list` before its SDK has loaded
 * (local-client/mcp/early-answers.ts). Those answers must be the ones the SDK server gives:
 * the built command's lines are compared with the SDK's, and every other message is left to
 * the SDK.
 */

const init = (protocolVersion: string, id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** The built command's answer lines to `messages` (stdin closed after them). */
async function builtAnswers(messages: unknown[]): Promise<unknown[]> {
  const child = spawn(process.execPath, [PLANPORT_BIN, "mcp"], {
    env: isolatedHome().env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  const exited = once(child, "exit");
  child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(""));
  const [code] = await exited;
  expect(code).toBe(0);
  return out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

describe("planport mcp's early answers", () => {
  it("are the SDK server's answers, for a supported and an unknown protocol version", async () => {
    const sdk = await mcpStartAnswers();
    for (const version of ["2025-06-18", "1999-01-01"]) {
      const lines = await builtAnswers([
        init(version),
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { jsonrpc: "2.0", id: "p", method: "ping" },
      ]);
      expect(lines).toEqual([
        {
          jsonrpc: "2.0",
          id: 1,
          result: {
            ...sdk.initialize,
            protocolVersion: version === "1999-01-01" ? sdk.latestVersion : version,
          },
        },
        { jsonrpc: "2.0", id: 2, result: sdk.toolsList },
        // Not answered early: the SDK's own answer, once.
        { jsonrpc: "2.0", id: "p", result: {} },
      ]);
    }
  }, 60_000);

  it("answers only a well-formed initialize first and tools/list after it", async () => {
    const answers = await mcpStartAnswers();
    const line = (m: unknown) => JSON.stringify(m);
    expect(
      earlyAnswer(line({ jsonrpc: "2.0", id: 1, method: "tools/list" }), answers, "start"),
    ).toEqual({ state: "done" });
    const noInfo = { ...init("2025-06-18"), params: { protocolVersion: "2025-06-18" } };
    expect(earlyAnswer(line(noInfo), answers, "start")).toEqual({ state: "done" });
    expect(earlyAnswer("not json", answers, "start")).toEqual({ state: "done" });
    const first = earlyAnswer(line(init("2025-06-18", "a")), answers, "start");
    expect(first).toMatchObject({ state: "initialized", id: "a" });
    expect(earlyAnswer(line(init("2025-06-18", 2)), answers, "initialized")).toEqual({
      state: "done",
    });
    const call = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list" } };
    expect(earlyAnswer(line(call), answers, "initialized")).toEqual({ state: "done" });
    expect(earlyAnswer(line(init("2025-06-18")), answers, "done")).toEqual({ state: "done" });
  });

  it("drops only the SDK's answer to an id answered early, once", () => {
    const answered = new Set<string | number>([1]);
    expect(answeredAlready('{"jsonrpc":"2.0","method":"notifications/x","id":1}', answered)).toBe(
      false,
    );
    expect(answeredAlready('{"result":{},"jsonrpc":"2.0","id":2}', answered)).toBe(false);
    expect(answeredAlready('{"result":{},"jsonrpc":"2.0","id":1}', answered)).toBe(true);
    expect(answeredAlready('{"result":{},"jsonrpc":"2.0","id":1}', answered)).toBe(false);
  });
});
