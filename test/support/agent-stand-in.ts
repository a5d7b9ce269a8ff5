import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * A stand-in for an agent CLI (`claude`, `codex`…) on PATH: an executable named like the agent
 * that records the argv, stdin, working directory and hand-off environment it was started with,
 * so a test can check what a `--on-teleport <preset>` hand-off gave it.
 */

/** What the stand-in saw. */
export interface AgentRecord {
  argv: string[];
  stdin: string;
  cwd: string;
  planFile: string;
  fresh: string;
}

/**
 * A folder with an executable stand-in named `name`; returns it and the file its record goes to.
 *
 * @example
 * const { bin, record } = agentStandIn("claude");
 * startCli([..., "--on-teleport", "claude"], { env: { ...env, PATH: pathWith(bin) } });
 */
export function agentStandIn(name: string): { bin: string; record: string } {
  const bin = mkdtempSync(join(tmpdir(), "planport-agent-"));
  const record = join(bin, "record.json");
  const script = join(bin, name);
  writeFileSync(
    script,
    `#!${process.execPath}
const fs = require("node:fs");
fs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({
  argv: process.argv.slice(2),
  stdin: fs.readFileSync(0, "utf8"),
  cwd: process.cwd(),
  planFile: process.env.PLANPORT_PLAN_FILE,
  fresh: process.env.PLANPORT_FRESH_CONTEXT,
}));
`,
  );
  chmodSync(script, 0o755);
  return { bin, record };
}

/** PATH = `bin` plus what node and git need. */
export const pathWith = (bin: string): string =>
  `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`;
