import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  baseEnv,
  ensurePinnedClient,
  type PinnedClient,
  type PinnedInstall,
} from "./pinned-client.ts";

/**
 * The real Gemini CLI for end-to-end tests, installed on demand — pinned, into a cache folder
 * (pinned-client.ts), never as a dependency — and the settings that point it at a Gemini API
 * double (test/client/gemini-double.ts) and nowhere else.
 */

export const GEMINI_CLI_VERSION = "0.61.0";

export const GEMINI_CLI: PinnedClient = {
  name: "gemini-cli",
  pkg: "@google/gemini-cli",
  version: GEMINI_CLI_VERSION,
  bin: "gemini",
};

/**
 * The cached `gemini` of {@link GEMINI_CLI_VERSION}, installing it first when it is absent.
 *
 * @example
 * const gemini = await ensureGeminiCli();
 * if (!gemini.ok) console.warn(gemini.reason);
 */
export function ensureGeminiCli(env: NodeJS.ProcessEnv = process.env): Promise<PinnedInstall> {
  return ensurePinnedClient(GEMINI_CLI, env);
}

/** The model the test pins: with a fixed model Gemini CLI makes no routing request first. */
export const GEMINI_TEST_MODEL = "gemini-2.5-flash";

/**
 * A home for Gemini CLI: `~/.gemini/settings.json` is the user's settings (the README's planport
 * setup, `userSettings`) with the test's own merged in — the API key auth (whose base URL
 * `GOOGLE_GEMINI_BASE_URL` then names; see the note below), a fixed model, no usage statistics,
 * telemetry or update checks — plus `policies` (file name → TOML) in `~/.gemini/policies/`, and
 * `trusted` folders in `~/.gemini/trustedFolders.json` (Gemini runs a stdio MCP server only in a
 * trusted folder; a user trusts it when Gemini first asks).
 *
 * Why the auth type is set: with `GOOGLE_GEMINI_BASE_URL` and no auth type in the settings,
 * gemini-cli 0.61.0 picks the "gateway" auth type, which its own non-interactive check refuses
 * ("Invalid auth method selected.": `validateAuthMethod`, packages/cli/src/config/auth.ts, knows
 * no gateway). With `gemini-api-key` selected, the API key auth reads the same variable.
 *
 * @example
 * const home = geminiHome({ userSettings: readmeGeminiSettings(), policies: {}, trusted: [repo] });
 */
export function geminiHome(opts: {
  userSettings: Record<string, unknown>;
  policies: Record<string, string>;
  trusted: string[];
}): string {
  const home = mkdtempSync(join(tmpdir(), "planport-gemini-home-"));
  const dir = join(home, ".gemini");
  mkdirSync(join(dir, "policies"), { recursive: true });
  const user = opts.userSettings as { security?: Record<string, unknown> };
  const settings = {
    ...opts.userSettings,
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    model: { name: GEMINI_TEST_MODEL },
    security: { ...user.security, auth: { selectedType: "gemini-api-key" } },
  };
  writeFileSync(join(dir, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
  for (const [name, toml] of Object.entries(opts.policies)) {
    writeFileSync(join(dir, "policies", name), toml);
  }
  writeFileSync(
    join(dir, "trustedFolders.json"),
    JSON.stringify(Object.fromEntries(opts.trusted.map((f) => [f, "TRUST_FOLDER"]))),
  );
  return home;
}

/**
 * The environment Gemini CLI runs under: its home, any API key, the double as its API, and
 * `extra` on top (PLANPORT_URL, PLANPORT_TOKEN, PATH…). Gemini passes MCP servers its whole
 * environment except variables whose names look like secrets (`*TOKEN*`, `*KEY*`, …) unless
 * the settings allow them.
 */
export function geminiEnv(opts: {
  home: string;
  geminiBaseUrl: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    ...baseEnv(),
    HOME: opts.home,
    GEMINI_API_KEY: "gemini-test-double-key",
    GOOGLE_GEMINI_BASE_URL: opts.geminiBaseUrl,
    ...opts.extra,
  };
}
