import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

/**
 * The real agent clients the end-to-end tests run (Claude Code, Codex CLI, Gemini CLI),
 * installed on demand — pinned, each into a cache folder of its own — rather than as dev
 * dependencies: together they are ~900 MB, and only their tests need them. A user's `npm ci`
 * never installs them; `.ci/warm-agent-clients` installs them before CI's suite runs.
 *
 *   PLANPORT_TEST_CACHE   the cache folder (default node_modules/.cache/planport-<name>-<version>)
 */

const INSTALL_TIMEOUT_MS = 600_000;
const REPO_ROOT = resolve(import.meta.dirname, "../..");

/** One pinned client: its npm package, version and command. */
export interface PinnedClient {
  /** The cache folder's name, e.g. `codex`. */
  name: string;
  /** The npm package, e.g. `@openai/codex`. */
  pkg: string;
  version: string;
  /** The command the package installs, e.g. `codex`. */
  bin: string;
  /** The environment under which `<bin> --version` runs quietly (no update check, no telemetry). */
  quietEnv?: Record<string, string>;
}

/** Where the pinned client is (or goes). */
export function pinnedClientDir(
  client: PinnedClient,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return env.PLANPORT_TEST_CACHE
    ? resolve(env.PLANPORT_TEST_CACHE, `${client.name}-${client.version}`)
    : join(REPO_ROOT, "node_modules", ".cache", `planport-${client.name}-${client.version}`);
}

/** The executable inside the cache (it may not exist yet). */
export function pinnedClientBin(
  client: PinnedClient,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return join(pinnedClientDir(client, env), "node_modules", ".bin", client.bin);
}

const run = promisify(execFile);

/** Whether the cached binary runs and reports `version` (`codex-cli 0.169.0`, `0.61.0`, …). */
async function runsVersion(client: PinnedClient, bin: string): Promise<boolean> {
  if (!existsSync(bin)) return false;
  try {
    const { stdout } = await run(bin, ["--version"], {
      timeout: 60_000,
      env: { ...process.env, ...client.quietEnv },
    });
    return stdout.trim().split(/\s+/).includes(client.version);
  } catch {
    return false;
  }
}

export type PinnedInstall =
  | { ok: true; bin: string; installed: boolean }
  | { ok: false; reason: string };

/**
 * The cached client, installing it first when it is absent (`npm install --prefix <cache>
 * <pkg>@<version> --no-save`). Resolves with why it could not (no registry, no disk…) instead
 * of throwing, so a test can say so.
 *
 * @example
 * const codex = await ensurePinnedClient(CODEX);
 * if (!codex.ok) console.warn(codex.reason);
 */
export async function ensurePinnedClient(
  client: PinnedClient,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PinnedInstall> {
  const bin = pinnedClientBin(client, env);
  if (await runsVersion(client, bin)) return { ok: true, bin, installed: false };
  const dir = pinnedClientDir(client, env);
  mkdirSync(dir, { recursive: true });
  const spec = `${client.pkg}@${client.version}`;
  try {
    await run(
      "npm",
      [
        "install",
        "--prefix",
        dir,
        spec,
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
      reason: `npm install ${spec} into ${dir} failed: ${(e.stderr || e.message).trim().slice(0, 2000)}`,
    };
  }
  if (!(await runsVersion(client, bin))) {
    return {
      ok: false,
      reason: `${bin} does not report ${client.version} after installing; a native binary may come from an optional dependency missing for this platform`,
    };
  }
  return { ok: true, bin, installed: true };
}

/** PATH, LANG, TMPDIR and TERM of this process: what a client needs to start, nothing more. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "LANG", "TMPDIR", "TERM"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
