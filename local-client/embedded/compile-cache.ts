import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { dirname, join } from "node:path";
import vm from "node:vm";

/**
 * Loads one large CommonJS module with V8's code cache kept on disk, so the next start skips
 * compiling it. The worker host loads Miniflare this way: its 3.8 MB entry module took about
 * half of the host's start-up to compile, every time (README "Performance").
 *
 * Node 22's `module.enableCompileCache()` does this for every module; planport supports Node
 * 20, which has no such switch, so this does it for the one module that matters, the way
 * Node's own loader runs a CommonJS module (wrapped, with its own `require`), and falls back to
 * a plain `require` whenever anything about the cache is off. V8 checks a cache against the
 * source and its own version and flags, and ignores one that does not match.
 *
 * The cache is written once the caller says the module has done its work (`saveCache`), so it
 * also holds the functions V8 compiled lazily on their first call; only when there was no
 * usable cache.
 *
 * @example
 * const loaded = loadWithCodeCache<typeof import("miniflare")>("miniflare", cacheDir);
 * const mf = new loaded.exports.Miniflare(options);
 * await mf.ready;
 * loaded.saveCache();
 */
export function loadWithCodeCache<T>(
  specifier: string,
  cacheDir: string,
): { exports: T; saveCache(): void } {
  const require = createRequire(import.meta.url);
  const file = require.resolve(specifier);
  const plain = () => ({ exports: require(file) as T, saveCache() {} });
  const cached = require.cache[file];
  if (cached?.loaded) return { exports: cached.exports as T, saveCache() {} };
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return plain();
  }
  const cachePath = join(cacheDir, `${cacheName(file)}.v8`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cachePath);
  } catch {
    // First start: the cache is written below.
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  const module = new Module(file);
  module.filename = file;
  // Resolution from the module's own folder, as Node's loader sets it up.
  module.paths = (
    Module as unknown as { _nodeModulePaths(dir: string): string[] }
  )._nodeModulePaths(dirname(file));
  require.cache[file] = module;
  try {
    const run = script.runInThisContext() as (...args: unknown[]) => void;
    run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
    module.loaded = true;
  } catch (err) {
    delete require.cache[file];
    throw err;
  }
  const stale = cachedData === undefined || script.cachedDataRejected === true;
  return {
    exports: module.exports as T,
    saveCache: () => {
      if (stale) writeCache(cachePath, script);
    },
  };
}

function writeCache(path: string, script: vm.Script): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, path);
  } catch {
    // A cache is an optimisation: a read-only or full disk only costs the next start time.
  }
}

/** A file name for the cache of `file` (an upgraded module's new source is caught by V8). */
function cacheName(file: string): string {
  return file.replace(/[^A-Za-z0-9._-]+/g, "_").slice(-120);
}
