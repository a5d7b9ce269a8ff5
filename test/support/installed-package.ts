import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageTarball } from "../../scripts/package.ts";

/**
 * The package as a user gets it: `npm run package` of this checkout (scripts/package.ts), `npm install -g` of the tarball
 * into a prefix of its own, and the installed `planport` run as root or as an unprivileged
 * user (`nobody`, with a home of its own). The install smoke test and the bench use it.
 */

export interface InstalledPackage {
  /** The temporary root everything lives under (readable by every user). */
  root: string;
  tarball: string;
  prefix: string;
  /** The installed `planport` command. */
  bin: string;
  /** The installed package's folder (`<prefix>/lib/node_modules/planport`). */
  packageDir: string;
}

/**
 * Packs this checkout and installs the tarball globally into a fresh prefix.
 *
 * @example
 * const pkg = await packAndInstall(); // then run pkg.bin
 */
export async function packAndInstall(): Promise<InstalledPackage> {
  const root = mkdtempSync(join(tmpdir(), "planport-installed-"));
  // mkdtemp makes it 0700: the unprivileged user must be able to reach the prefix.
  chmodSync(root, 0o755);
  const packDir = join(root, "pack");
  mkdirSync(packDir, { mode: 0o755 });
  const tarball = await packageTarball(packDir);
  const prefix = join(root, "prefix");
  const install = spawnSync(
    "npm",
    ["install", "-g", "--prefix", prefix, tarball, "--no-audit", "--no-fund", "--prefer-offline"],
    { encoding: "utf8", env: quietNpm() },
  );
  if (install.status !== 0) {
    throw new Error(
      `npm install -g failed (${install.status}):\n${install.stdout}${install.stderr}`,
    );
  }
  return {
    root,
    tarball,
    prefix,
    bin: join(prefix, "bin", "planport"),
    packageDir: join(prefix, "lib", "node_modules", "planport"),
  };
}

function quietNpm(): NodeJS.ProcessEnv {
  return { ...process.env, npm_config_update_notifier: "false", npm_config_loglevel: "error" };
}

/** An unprivileged account to run as, when this process may switch to it (root in CI). */
export const UNPRIVILEGED = "nobody";

export function canSwitchUser(): boolean {
  return process.getuid?.() === 0 && spawnSync("id", ["-u", UNPRIVILEGED]).status === 0;
}

/** A home folder of its own for `user` (owned by it). */
export function homeFor(user: string | null, root: string, name: string): string {
  const home = join(root, name);
  mkdirSync(home, { recursive: true, mode: 0o755 });
  if (user !== null) chownTree(home, user);
  return home;
}

/** Gives `path` and everything under it to `user`. */
export function chownTree(path: string, user: string): void {
  const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
  const walk = (p: string): void => {
    chownSync(p, uid, gid);
    if (statSync(p).isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(path);
}

/**
 * Spawns a command as `user` (null: as this process's user) with a clean environment: the
 * given HOME, PATH with the install's bin first, nothing of ours (no PLANPORT_* vars).
 */
export function spawnAs(
  user: string | null,
  command: string[],
  opts: { home: string; cwd: string; path: string; env?: Record<string, string> },
) {
  const env = {
    HOME: opts.home,
    PATH: opts.path,
    LANG: "C.UTF-8",
    ...opts.env,
  };
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const argv =
    user === null
      ? ["env", "-i", ...envArgs, ...command]
      : ["runuser", "-u", user, "--", "env", "-i", ...envArgs, ...command];
  return spawn(argv[0] as string, argv.slice(1), {
    cwd: opts.cwd,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/**
 * Every file and folder under `dir` with its size and modification time: compared before and
 * after a run, it shows anything written inside the installed package.
 */
export function treeListing(dir: string): Map<string, string> {
  const listing = new Map<string, string>();
  const walk = (p: string): void => {
    const stat = statSync(p);
    listing.set(p, `${stat.isDirectory() ? "d" : stat.size} ${stat.mtimeMs}`);
    if (stat.isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(dir);
  return listing;
}
