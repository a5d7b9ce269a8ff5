import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  baseEnv,
  ensurePinnedClient,
  type PinnedClient,
  type PinnedInstall,
} from "./pinned-client.ts";

/**
 * The real Codex CLI for end-to-end tests, installed on demand — pinned, into a cache folder
 * (pinned-client.ts), never as a dependency — and the configuration that points it at a
 * Responses API double (test/client/responses-double.ts) and nowhere else.
 */

export const CODEX_VERSION = "0.169.0";

export const CODEX: PinnedClient = {
  name: "codex",
  pkg: "@openai/codex",
  version: CODEX_VERSION,
  bin: "codex",
};

/**
 * The cached `codex` of {@link CODEX_VERSION}, installing it first when it is absent.
 *
 * @example
 * const codex = await ensureCodex();
 * if (!codex.ok) console.warn(codex.reason);
 */
export function ensureCodex(env: NodeJS.ProcessEnv = process.env): Promise<PinnedInstall> {
  return ensurePinnedClient(CODEX, env);
}

/** The variable holding the double's API key (any value; Codex sends it as a bearer token). */
const KEY_VARIABLE = "PLANPORT_TEST_DOUBLE_KEY";

/**
 * A Codex home (`CODEX_HOME`) whose config.toml is the test's model provider — the Responses
 * API double at `responsesBaseUrl`, no update check, no analytics, no plugins (the plugin
 * marketplace is what reaches github.com and chatgpt.com at start) — followed by `userConfig`
 * as a user writes it (the README's planport setup), verbatim.
 *
 * @example
 * const codexHome = codexHome({ responsesBaseUrl: `${double.url}/t/lane/v1`, userConfig: readmeCodexConfig() });
 */
export function codexHome(opts: { responsesBaseUrl: string; userConfig: string }): string {
  const home = join(mkdtempSync(join(tmpdir(), "planport-codex-home-")), ".codex");
  mkdirSync(home, { recursive: true });
  const testConfig = [
    "# The test's model: a Responses API double. Nothing here reaches the network.",
    'model = "gpt-double"',
    'model_provider = "double"',
    "check_for_update_on_startup = false",
    "",
    "[model_providers.double]",
    'name = "Responses API double"',
    `base_url = ${JSON.stringify(opts.responsesBaseUrl)}`,
    'wire_api = "responses"',
    `env_key = "${KEY_VARIABLE}"`,
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[features]",
    "plugins = false",
    "",
    "# What a user writes (README):",
    "",
  ].join("\n");
  writeFileSync(join(home, "config.toml"), `${testConfig}${opts.userConfig.trim()}\n`);
  return home;
}

/**
 * The environment Codex runs under: a home of its own (`HOME` and `CODEX_HOME`, no user
 * config, no login), the double's key, and `extra` on top (PLANPORT_URL, PLANPORT_TOKEN, PATH…).
 * Codex passes MCP servers only a few of these (HOME, PATH, …) plus what `env_vars` names.
 */
export function codexEnv(opts: {
  codexHome: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    ...baseEnv(),
    HOME: join(opts.codexHome, ".."),
    CODEX_HOME: opts.codexHome,
    [KEY_VARIABLE]: "sk-test-double",
    ...opts.extra,
  };
}

/**
 * Ends what Codex's interactive UI leaves behind in a test's `codexHome`: it starts an
 * app-server daemon (and its pid-update loop) from that home that outlives the UI. `codex
 * app-server daemon stop` stops the server; anything still running from that home (a folder
 * only this test uses) is sent SIGTERM by its pid.
 */
export function stopCodexDaemons(bin: string, home: string, env: Record<string, string>): void {
  try {
    execFileSync(bin, ["app-server", "daemon", "stop"], { env, stdio: "ignore", timeout: 60_000 });
  } catch {
    // No daemon was running, or it had gone already.
  }
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(home)) process.kill(Number(pid));
    } catch {
      // The process ended meanwhile.
    }
  }
}
