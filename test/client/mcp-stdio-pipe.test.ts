import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { isolatedHome, PLANPORT_BIN } from "./run-cli.ts";

/**
 * `planport mcp` whose client stops reading (`planport mcp | head -c 1`, an agent that crashed):
 * the next write fails with EPIPE, and the server ends quietly with exit 0 instead of dying on
 * an unhandled error event.
 */

const MESSAGES = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
  { jsonrpc: "2.0", id: 3, method: "tools/list" },
];

describe("planport mcp when its reader goes away", () => {
  it("ends with exit 0 and no error when stdout is closed under it", async () => {
    const home = isolatedHome();
    const child = spawn(process.execPath, [PLANPORT_BIN, "mcp"], {
      env: home.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = once(child, "exit");
    // Read the first answer, then close the pipe, as `head -c 1` does; then ask for more: its
    // answer meets the closed pipe.
    child.stdout.once("data", () => {
      child.stdout.destroy();
      child.stdin.write(`${JSON.stringify(MESSAGES[3])}\n`);
      child.stdin.end();
    });
    child.stdin.write(
      `${MESSAGES.slice(0, 3)
        .map((m) => JSON.stringify(m))
        .join("\n")}\n`,
    );
    const [code] = await exited;
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at process/);
    expect(code).toBe(0);
  }, 60_000);
});
