import {
  baseEnv,
  ensurePinnedClient,
  type PinnedClient,
  type PinnedInstall,
  pinnedClientBin,
  pinnedClientDir,
} from "./pinned-client.ts";

/**
 * The real Claude Code client for end-to-end tests, installed on demand — pinned, into a cache
 * folder (pinned-client.ts) — rather than as a dev dependency (its native binary is ~370 MB,
 * and only the plugin tests need it). `.ci/warm-agent-clients` installs it before the suite runs.
 */

export const CLAUDE_CODE_VERSION = "2.1.328";

export const CLAUDE_CODE: PinnedClient = {
  name: "claude-code",
  pkg: "@anthropic-ai/claude-code",
  version: CLAUDE_CODE_VERSION,
  bin: "claude",
  quietEnv: { DISABLE_TELEMETRY: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
};

/** Where the pinned client is (or goes). */
export function claudeCodeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return pinnedClientDir(CLAUDE_CODE, env);
}

/** The `claude` executable inside the cache (it may not exist yet). */
export function claudeCodeBin(env: NodeJS.ProcessEnv = process.env): string {
  return pinnedClientBin(CLAUDE_CODE, env);
}

export type ClaudeCodeInstall = PinnedInstall;

/**
 * The cached `claude` of {@link CLAUDE_CODE_VERSION}, installing it first when it is absent.
 * Resolves with why it could not instead of throwing, so a test can say so.
 *
 * @example
 * const claude = await ensureClaudeCode();
 * if (!claude.ok) console.warn(claude.reason);
 */
export function ensureClaudeCode(env: NodeJS.ProcessEnv = process.env): Promise<ClaudeCodeInstall> {
  return ensurePinnedClient(CLAUDE_CODE, env);
}

/**
 * The environment measured to run Claude Code headless against a Messages API double: a home
 * of its own (no user settings, no login), any API key, the double as its API, and no
 * telemetry or other traffic. `extra` is added on top (MCP servers inherit all of it).
 */
export function claudeCodeEnv(opts: {
  home: string;
  anthropicBaseUrl: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    ...baseEnv(),
    HOME: opts.home,
    ANTHROPIC_API_KEY: "sk-ant-test-double",
    ANTHROPIC_BASE_URL: opts.anthropicBaseUrl,
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...opts.extra,
  };
}
