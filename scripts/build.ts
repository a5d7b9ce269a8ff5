import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { RUNTIME_MODULES } from "../local-client/embedded/workerd-config.ts";
import { assetsManifest } from "./assets-manifest.ts";
import { writeBundleConfig } from "./bundle-config.ts";
import { mcpStartAnswers } from "./mcp-start-answers.ts";

/**
 * The one build step: what the installed `planport` runs, so no TypeScript is transpiled at
 * run time. `npm run build` runs it; so do `prepare` (after `npm ci` in a clone) and `prepack`
 * (before `npm pack`). It writes `dist/`:
 *
 * - `dist/cli/` — the command (`planport.js`) and the embedded worker's host
 *   (`worker-host.js`), bundled by esbuild with code splitting: `planport --help` loads the
 *   command table and nothing else; each command loads its own modules when it runs.
 * - `dist/lib/index.js` — the library, from `local-client/index.ts` (CONTRACT), and its types
 *   (`dist/lib/types/`, by tsc).
 * - `dist/container/` — the execution image's build context: `runner.mjs`, the command runner
 *   (container/runner/, one file for the Node 18 of Debian bookworm, zod bundled), and a copy
 *   of `container/Dockerfile`, which copies it in. Both `npm run container:image` and
 *   Cloudflare's image build (wrangler.toml) build from this folder.
 * - `dist/worker/` — the worker exactly as wrangler bundles it for a deploy
 *   (`wrangler deploy --dry-run`), and the options wrangler derives from `wrangler.toml`
 *   (bindings, Durable Objects, R2, rate limits, static assets): wrangler.toml stays the one
 *   place bindings are declared, and the installed package needs neither wrangler nor esbuild
 *   to run the worker. Beside them, `runtime/`: the modules the embedded worker's workerd
 *   config names besides the worker (local-client/embedded/workerd-config.ts) — Miniflare's R2
 *   object and rate limiter, copied from the Miniflare that `wrangler dev` runs (so local state
 *   and limits behave the same under both), and our assets router — and `assets.json`, the
 *   static assets' index.
 *
 * Why esbuild (and wrangler's own esbuild for the worker) rather than tsc: the command must
 * start in a few milliseconds, which needs few files to load and each command's dependencies
 * split off; tsc emits one file per source file and leaves every dependency to be resolved
 * and loaded from node_modules at each start.
 *
 * The build is written beside `dist/` and swapped in at the end, so a half-finished build never
 * replaces a working one. `--if-stale` builds only when an input changed since the last build
 * (the test setup uses it).
 *
 * @example
 * npm run build
 * npx tsx scripts/build.ts --if-stale
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
/** What the build reads: a change to any of these makes `dist/` stale. */
const INPUTS = [
  "src",
  "container",
  "local-client",
  "public",
  "wrangler.toml",
  "package.json",
  "tsconfig.base.json",
  "tsconfig.lib.json",
  "scripts/build.ts",
  "scripts/bundle-config.ts",
  "scripts/assets-manifest.ts",
  "scripts/mcp-start-answers.ts",
];
const STAMP = "build-inputs.sha256";

/** Node's built-ins and the Workers runtime the host starts; everything else is bundled. */
const EXTERNAL = ["workerd"];

/** A fingerprint of every input file (path and content), in a stable order. */
export function inputsDigest(root = ROOT): string {
  const hash = createHash("sha256");
  const walk = (path: string): void => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) walk(join(path, name));
      return;
    }
    hash.update(relative(root, path)).update("\0").update(readFileSync(path)).update("\0");
  };
  for (const input of INPUTS) walk(join(root, input));
  return hash.digest("hex");
}

/** Whether `dist/` was built from the inputs as they are now. */
export function isFresh(root = ROOT): boolean {
  try {
    return readFileSync(join(root, "dist", STAMP), "utf8").trim() === inputsDigest(root);
  } catch {
    return false;
  }
}

/**
 * zod's namespace export `z.locales` (and `core.locales`) re-exports its ~50 message
 * translations, 264 KB of the 480 KB shared chunk every API command loads; esbuild cannot drop
 * an unused member of a namespace it keeps. planport never switches zod's locale (zod registers
 * English itself, from `locales/en.js`), so the namespace is built from English alone.
 */
const zodEnglishOnly: Plugin = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), "..", "locales", "index.js"), namespace: "zod-en" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-en" }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

async function buildNodeCode(out: string): Promise<void> {
  const common = {
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: EXTERNAL,
    // Bundled CommonJS dependencies call require() for Node's built-ins.
    banner: {
      js: 'import { createRequire as __planportRequire } from "node:module"; const require = __planportRequire(import.meta.url);',
    },
    legalComments: "external",
    minify: true,
    logLevel: "warning",
    plugins: [zodEnglishOnly] as Plugin[],
    // `planport mcp`'s first two answers, sent before the SDK loads (mcp/early-answers.ts).
    define: { PLANPORT_MCP_START_ANSWERS: JSON.stringify(JSON.stringify(await mcpStartAnswers())) },
  } as const;
  await build({
    ...common,
    entryPoints: {
      planport: join(ROOT, "local-client", "cli.ts"),
      "worker-host": join(ROOT, "local-client", "embedded", "worker-host.ts"),
    },
    outdir: join(out, "cli"),
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
  });
  await build({
    ...common,
    entryPoints: { index: join(ROOT, "local-client", "index.ts") },
    outdir: join(out, "lib"),
  });
}

/** `dist/container/`: the runner, for the image's Node (bookworm ships Node 18), and the Dockerfile. */
async function buildContainerRunner(out: string): Promise<void> {
  await build({
    entryPoints: [join(ROOT, "container", "runner", "main.ts")],
    outfile: join(out, "container", "runner.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node18",
    legalComments: "external",
    minify: true,
    logLevel: "warning",
    plugins: [zodEnglishOnly],
  });
  copyFileSync(join(ROOT, "container", "Dockerfile"), join(out, "container", "Dockerfile"));
}

/**
 * The library's types (tsconfig.lib.json), with the sources' `.ts` import specifiers turned
 * into the `.js` a consumer's TypeScript resolves to these `.d.ts` files.
 */
function buildLibraryTypes(out: string): void {
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const types = join(out, "lib", "types");
  const run = spawnSync(
    process.execPath,
    [tsc, "-p", join(ROOT, "tsconfig.lib.json"), "--outDir", types],
    { cwd: ROOT, encoding: "utf8" },
  );
  if (run.status !== 0) throw new Error(`tsc (library types) failed:\n${run.stdout}${run.stderr}`);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".d.ts")) {
        const text = readFileSync(path, "utf8").replace(
          /((?:from|import\()\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g,
          "$1$2.js$3",
        );
        writeFileSync(path, text);
      }
    }
  };
  walk(types);
}

/** The worker as `wrangler deploy` would upload it, and its Miniflare options. */
async function buildWorker(out: string): Promise<void> {
  const dir = join(out, "worker");
  const wrangler = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  const logs = join(tmpdir(), `planport-build-${process.pid}`);
  // wrangler.toml with its container images as references: a dry run would build them.
  const configDir = mkdtempSync(join(tmpdir(), "planport-bundle-"));
  const run = spawnSync(
    process.execPath,
    [
      wrangler,
      "deploy",
      "--dry-run",
      "--minify",
      "--outdir",
      dir,
      "--config",
      writeBundleConfig(ROOT, configDir),
    ],
    {
      cwd: ROOT,
      encoding: "utf8",
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_LOG_PATH: logs,
        NO_COLOR: "1",
        CI: "true",
      },
    },
  );
  rmSync(logs, { recursive: true, force: true });
  rmSync(configDir, { recursive: true, force: true });
  if (run.status !== 0) {
    throw new Error(`wrangler deploy --dry-run failed:\n${run.stdout}\n${run.stderr}`);
  }
  // Only the module runs; the source map (twice the module's size) and wrangler's note are
  // not shipped.
  for (const name of readdirSync(dir)) {
    if (name !== "index.js") rmSync(join(dir, name), { recursive: true, force: true });
  }
  const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
  // Containers off, whatever [dev] says: the embedded worker runs commands through the local
  // executor, and the container class is an ordinary Durable Object there.
  const { workerOptions } = unstable_getMiniflareWorkerOptions(
    join(ROOT, "wrangler.toml"),
    undefined,
    { overrides: { enableContainers: false } },
  );
  const name = /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(join(ROOT, "wrangler.toml"), "utf8"));
  const options = {
    ...workerOptions,
    // Relative to the package root: the host resolves it where the package is installed.
    assets:
      workerOptions.assets === undefined
        ? undefined
        : { ...workerOptions.assets, directory: relative(ROOT, workerOptions.assets.directory) },
  };
  writeFileSync(
    join(dir, "options.json"),
    `${JSON.stringify({ name: name?.[1] ?? "planport", main: "index.js", options }, null, 2)}\n`,
  );
  if (options.assets !== undefined) {
    writeFileSync(
      join(dir, "assets.json"),
      `${JSON.stringify(assetsManifest(join(ROOT, options.assets.directory)))}\n`,
    );
  }
  await buildRuntimeModules(join(dir, "runtime"));
}

/** Miniflare's modules the embedded worker's config names, by the names it gives them. */
const MINIFLARE_MODULES: [keyof typeof RUNTIME_MODULES, string][] = [
  ["shared", "shared/index.worker.js"],
  ["zod", "shared/zod.worker.js"],
  ["r2Bucket", "r2/bucket.worker.js"],
  ["objectEntry", "shared/object-entry.worker.js"],
  ["rateLimit", "ratelimit/ratelimit.worker.js"],
];

/**
 * `dist/worker/runtime/`: Miniflare's storage modules (MIT; their licence notice goes with
 * them) and the assets router.
 */
async function buildRuntimeModules(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const miniflare = join(ROOT, "node_modules", "miniflare");
  const version = JSON.parse(readFileSync(join(miniflare, "package.json"), "utf8")).version;
  for (const [name, source] of MINIFLARE_MODULES) {
    const text = readFileSync(join(miniflare, "dist", "src", "workers", source), "utf8");
    // The source map comment names a file the package does not ship.
    writeFileSync(
      join(dir, RUNTIME_MODULES[name]),
      text.replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n"),
    );
  }
  writeFileSync(
    join(dir, "MINIFLARE-LICENSE.txt"),
    `The miniflare-*.worker.js modules are from the npm package miniflare@${version}\n` +
      "(https://github.com/cloudflare/workers-sdk/tree/main/packages/miniflare), under the MIT licence\n" +
      "given there (packages/miniflare/LICENSE).\n",
  );
  await build({
    entryPoints: [join(ROOT, "local-client", "embedded", "runtime", "assets.ts")],
    outfile: join(dir, RUNTIME_MODULES.assets),
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    minify: true,
    logLevel: "warning",
  });
}

/**
 * Builds `dist/`; with `ifStale`, only when an input changed since the last build. Resolves
 * true when it built.
 *
 * @example
 * await buildDist({ ifStale: true }); // the node tests' set-up
 */
export async function buildDist(opts: { ifStale?: boolean } = {}): Promise<boolean> {
  if (opts.ifStale && isFresh()) return false;
  const digest = inputsDigest();
  const next = `${DIST}.next`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  const started = performance.now();
  await buildNodeCode(next);
  await buildContainerRunner(next);
  buildLibraryTypes(next);
  await buildWorker(next);
  writeFileSync(join(next, STAMP), `${digest}\n`);
  const old = `${DIST}.old`;
  rmSync(old, { recursive: true, force: true });
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(next, DIST);
  rmSync(old, { recursive: true, force: true });
  process.stderr.write(
    `planport: built dist/ (cli, lib, container, worker) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return true;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildDist({ ifStale: process.argv.includes("--if-stale") });
}
