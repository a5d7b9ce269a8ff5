import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";
import { type BenchRow, limitRow, median } from "./rows.ts";

/**
 * P11, `planport mcp` as an agent starts it (issue 27): wall-clock milliseconds from spawning the
 * built command until its answer to `tools/list` (after `initialize`) is on stdout, next to
 * spawning `node -e 0` until it exits. Codex gives an MCP server that is not `required` about
 * 1 s before its first model request, so the server must list its tools well inside that.
 *
 * @example
 * rows.push(await benchMcpStart({ server, token, runs: 7 }));
 */

const BIN = join(PACKAGE_ROOT, "local-client", "bin", "planport.js");
const TOOLS_LIST_MS_AT_MOST = 300;

const REQUESTS = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "planport-bench", version: "0" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
]
  .map((m) => `${JSON.stringify(m)}\n`)
  .join("");

/** Milliseconds from spawning `planport mcp` until its tools/list answer arrives. */
async function toolsListMs(env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, "mcp"], { env, stdio: ["pipe", "pipe", "pipe"] });
  const exited = once(child, "exit");
  child.stdin?.write(REQUESTS);
  let out = "";
  let err = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  try {
    return await new Promise<number>((resolve, reject) => {
      child.stdout?.setEncoding("utf8").on("data", (d: string) => {
        out += d;
        if (/"id":2[,}]/.test(out) && out.includes('"tools"')) resolve(performance.now() - started);
      });
      void exited.then(() => reject(new Error(`planport mcp exited early:\n${out}\n${err}`)));
    });
  } finally {
    child.stdin?.end();
    child.kill("SIGTERM");
    await exited;
  }
}

/** Milliseconds from spawning `node -e 0` until it exits. */
async function nodeMs(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await once(child, "exit");
  return performance.now() - started;
}

export async function benchMcpStart(opts: {
  server: string;
  token: string;
  runs?: number;
}): Promise<BenchRow> {
  const runs = opts.runs ?? 7;
  const home = mkdtempSync(join(tmpdir(), "planport-bench-mcp-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PLANPORT_HOME: join(home, "home"),
    XDG_DATA_HOME: join(home, "data"),
    PLANPORT_URL: opts.server,
    PLANPORT_TOKEN: opts.token,
  };
  try {
    await toolsListMs(env);
    await nodeMs();
    const mcp: number[] = [];
    const node: number[] = [];
    for (let i = 0; i < runs; i++) {
      mcp.push(await toolsListMs(env));
      node.push(await nodeMs());
    }
    return limitRow({
      id: "P11",
      name: `\`planport mcp\`: spawn to its \`tools/list\` answer, wall clock (median of ${runs}; ratio ${(median(mcp) / median(node)).toFixed(2)}x)`,
      unit: "ms",
      value: median(mcp),
      baseline: median(node),
      baselineName: "`node -e 0` spawn to exit",
      atMost: TOOLS_LIST_MS_AT_MOST,
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
