import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

/**
 * The real Claude Code client for end-to-end tests, installed on demand — pinned, into a cache
 * folder — rather than as a dev dependency (its native binary is ~370 MB, and only the plugin
 * tests need it). `.ci/warm-claude-code` installs it before the suite runs.
 *
 *   PLANPORT_TEST_CACHE   the cache folder (default node_modules/.cache/planport-claude-code-<version>)
 */

export const CLAUDE_CODE_VERSION = "2.1.328";
const INSTALL_TIMEOUT_MS = 600_000;
const REPO_ROOT = resolve(import.meta.dirname, "../..");

/** Where the pinned client is (or goes). */
export function claudeCodeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PLANPORT_TEST_CACHE
    ? resolve(env.PLANPORT_TEST_CACHE, `claude-code-${CLAUDE_CODE_VERSION}`)
    : join(REPO_ROOT, "node_modules", ".cache", `planport-claude-code-${CLAUDE_CODE_VERSION}`);
}

/** The `claude` executable inside the cache (it may not exist yet). */
export function claudeCodeBin(env: NodeJS.ProcessEnv = process.env): string {
  return join(claudeCodeCacheDir(env), "node_modules", ".bin", "claude");
}

const run = promisify(execFile);

/** The version the cached binary reports, or null when it is missing or does not run. */
async function cachedVersion(bin: string): Promise<string | null> {
  if (!existsSync(bin)) return null;
  try {
    const { stdout } = await run(bin, ["--version"], {
      timeout: 60_000,
      env: {
        ...process.env,
        DISABLE_TELEMETRY: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
    });
    return stdout.trim().split(/\s/)[0] ?? null;
  } catch {
    return null;
  }
}

export type ClaudeCodeInstall =
  | { ok: true; bin: string; installed: boolean }
  | { ok: false; reason: string };

/**
 * The cached `claude` of {@link CLAUDE_CODE_VERSION}, installing it first when it is absent
 * (`npm install --prefix <cache> @anthropic-ai/claude-code@<version> --no-save`). Resolves
 * with why it could not (no registry, no disk…) instead of throwing, so a test can say so.
 *
 * @example
 * const claude = await ensureClaudeCode();
 * if (!claude.ok) console.warn(claude.reason);
 */
export async function ensureClaudeCode(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ClaudeCodeInstall> {
  const bin = claudeCodeBin(env);
  if ((await cachedVersion(bin)) === CLAUDE_CODE_VERSION)
    return { ok: true, bin, installed: false };
  const dir = claudeCodeCacheDir(env);
  mkdirSync(dir, { recursive: true });
  try {
    await run(
      "npm",
      [
        "install",
        "--prefix",
        dir,
        `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
      ],
      { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return {
      ok: false,
      reason: `npm install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} into ${dir} failed: ${(e.stderr || e.message).trim().slice(0, 2000)}`,
    };
  }
  const version = await cachedVersion(bin);
  if (version !== CLAUDE_CODE_VERSION) {
    return {
      ok: false,
      reason: `${bin} does not run after installing (it reports ${version ?? "nothing"}); its native binary comes from an optional dependency for this platform`,
    };
  }
  return { ok: true, bin, installed: true };
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
  const env: Record<string, string> = {};
  for (const name of ["PATH", "LANG", "TMPDIR", "TERM"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    HOME: opts.home,
    ANTHROPIC_API_KEY: "sk-ant-test-double",
    ANTHROPIC_BASE_URL: opts.anthropicBaseUrl,
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...opts.extra,
  };
}
