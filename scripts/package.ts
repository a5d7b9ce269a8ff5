import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildDist } from "./build.ts";

/**
 * `npm run package`: the package as a user installs it — `planport-<version>.tgz` in the
 * clone's root, ready for `npm install -g ./planport-<version>.tgz`.
 *
 * Why not plain `npm pack`: it packs the clone's package.json as it is, with the clone's
 * lifecycle scripts (`prepare` runs patch-package, a fix for the test pool), so npm warns at
 * install time that the package has an install script it will not run; and it runs `prepare`
 * — a full build — on every pack, even when `dist/` is fresh. Here the build runs only when
 * an input changed (`buildDist({ ifStale: true })`), the files npm would pack (the `files`
 * list, as `npm pack --dry-run` reads it) are copied into a staging folder with a
 * package.json that keeps what an installed package needs — no `scripts`, no
 * `devDependencies` — and that folder is packed with scripts off.
 *
 * @example
 * npm run package            # → ./planport-0.1.0.tgz
 * npm run package -- --out /tmp/pkgs
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** What an installed package's manifest keeps of the clone's: no scripts, no dev tools. */
export function installedManifest(manifest: Record<string, unknown>): Record<string, unknown> {
  const { scripts: _scripts, devDependencies: _dev, ...kept } = manifest;
  return kept;
}

interface PackedFile {
  path: string;
}

/** The files `npm pack` would put in the tarball (the `files` list, README, package.json). */
function packedFiles(): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, npm_config_loglevel: "error", npm_config_update_notifier: "false" },
  });
  const [report] = JSON.parse(out) as { files: PackedFile[] }[];
  if (report === undefined) throw new Error("npm pack --dry-run listed no package");
  return report.files.map((file) => file.path);
}

/** Builds when stale, stages the package and packs it into `outDir`; returns the tarball. */
export async function packageTarball(outDir: string = ROOT): Promise<string> {
  await buildDist({ ifStale: true });
  const stage = mkdtempSync(join(tmpdir(), "planport-package-"));
  try {
    for (const path of packedFiles()) {
      if (path === "package.json") continue;
      mkdirSync(dirname(join(stage, path)), { recursive: true });
      cpSync(join(ROOT, path), join(stage, path));
    }
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    writeFileSync(
      join(stage, "package.json"),
      `${JSON.stringify(installedManifest(manifest), null, 2)}\n`,
    );
    mkdirSync(outDir, { recursive: true });
    const name = execFileSync(
      "npm",
      ["pack", stage, "--ignore-scripts", "--pack-destination", outDir, "--silent"],
      {
        encoding: "utf8",
        env: { ...process.env, npm_config_loglevel: "error", npm_config_update_notifier: "false" },
      },
    )
      .trim()
      .split("\n")
      .pop();
    if (name === undefined || name === "") throw new Error("npm pack named no tarball");
    return join(outDir, name);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf("--out");
  const outDir = at === -1 ? ROOT : resolve(process.argv[at + 1] ?? ".");
  const tarball = await packageTarball(outDir);
  process.stdout.write(`${tarball}\n`);
}
