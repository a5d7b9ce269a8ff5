import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";
import { canSwitchUser, homeFor, UNPRIVILEGED } from "../support/installed-package.ts";

/**
 * The README's Install section runs verbatim (issue 32): on a fresh clone of this checkout's
 * HEAD, as root and as the unprivileged `nobody` with a home of its own, the section's
 * commands — `npm ci`, `npm run package`, `npm install -g ./planport-<version>.tgz` — exit 0
 * with no word about install scripts, and the installed `planport` answers `--help`. Each user
 * first runs the section's advice for an ordinary user, `npm config set prefix ~/.local`, so
 * nothing lands in the machine's global prefix. The unprivileged user starts from a copy of
 * this user's npm cache (as a user who has used npm before would), so the test does not depend
 * on downloading 460 MB from the registry.
 */

const README = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");

/** The Install section's first fenced block: the lines a user types. */
function installBlock(): string {
  const start = README.indexOf("\n## Install\n");
  const end = README.indexOf("\n## ", start + 5);
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(README.slice(start, end));
  if (start === -1 || block?.[1] === undefined) throw new Error("README has no Install block");
  return block[1];
}

/** The advice the section gives an ordinary user, quoted from it so a change there shows here. */
const PREFIX_ADVICE = "npm config set prefix ~/.local";

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const users: (string | null)[] = canSwitchUser() ? [null, UNPRIVILEGED] : [null];

/**
 * What this machine needs to reach the npm registry, as every user of it has it: proxies, and
 * the certificate authorities of a proxy that re-signs traffic. npm reads a machine-wide CA from
 * `<prefix>/etc/npmrc`, which a user's own prefix (the README's advice) no longer points at, so
 * the CA file npm uses here is passed on as `npm_config_cafile`.
 */
function machineNetworkEnv(): string[] {
  const names = /^(https?_proxy|no_proxy|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR))$/i;
  const passed = Object.entries(process.env)
    .filter(([name, value]) => names.test(name) && value !== undefined)
    .map(([name, value]) => `${name}=${value}`);
  const cafile = spawnSync("npm", ["config", "get", "cafile"], { encoding: "utf8" }).stdout.trim();
  if (cafile !== "" && cafile !== "null" && cafile !== "undefined") {
    passed.push(`npm_config_cafile=${cafile}`);
  }
  return passed;
}

function shellAs(user: string | null, script: string, cwd: string, home: string) {
  const env = [
    ...machineNetworkEnv(),
    `HOME=${home}`,
    // A login shell's PATH: the user's own bin, Node's, the system's — nothing of this clone.
    `PATH=${join(home, ".local", "bin")}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    "LANG=C.UTF-8",
    "npm_config_update_notifier=false",
    "npm_config_fund=false",
    "npm_config_audit=false",
  ];
  const argv = ["env", "-i", ...env, "bash", "-euo", "pipefail", "-c", script];
  const [cmd, ...args] = user === null ? argv : ["runuser", "-u", user, "--", ...argv];
  return spawnSync(cmd as string, args, { cwd, encoding: "utf8", maxBuffer: 64 << 20 });
}

describe("the README's Install section", () => {
  it("names the advice the test follows for an ordinary user", () => {
    expect(README).toContain(PREFIX_ADVICE);
    expect(installBlock()).toMatch(/^npm ci\b/m);
  });

  for (const user of users) {
    it(`runs verbatim on a fresh clone as ${user ?? "this user"}`, { timeout: 1_200_000 }, () => {
      const root = mkdtempSync(join(tmpdir(), "planport-readme-install-"));
      roots.push(root);
      chmodSync(root, 0o755);
      const home = homeFor(null, root, "home");
      const clone = join(root, "clone");
      execFileSync("git", ["clone", "--quiet", PACKAGE_ROOT, clone]);
      const cache = join(homedir(), ".npm", "_cacache");
      if (user !== null && existsSync(cache)) {
        mkdirSync(join(home, ".npm"));
        execFileSync("cp", ["-a", cache, join(home, ".npm", "_cacache")]);
      }
      if (user !== null) execFileSync("chown", ["-R", `${user}:`, home, clone]);

      const advice = shellAs(user, PREFIX_ADVICE, clone, home);
      expect(advice.status, advice.stderr).toBe(0);
      const install = shellAs(user, installBlock(), clone, home);
      const said = `${install.stdout}\n${install.stderr}`;
      expect(install.status, said).toBe(0);
      // npm 11 lists the install scripts it did not run: none may be planport's own (workerd's
      // postinstall is listed; planport runs workerd's binary without it, as the plan below shows
      // in test/e2e/installed-package.test.ts).
      expect(said).not.toMatch(/install-scripts\s+planport@|patch-package: not found/);

      const installed = join(home, ".local", "lib", "node_modules", "planport");
      expect(lstatSync(installed).isSymbolicLink()).toBe(false);
      const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
      expect(manifest.scripts).toBeUndefined();
      expect(manifest.devDependencies).toBeUndefined();

      const help = shellAs(user, "planport --help", root, home);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toContain("planport");
    });
  }
});
