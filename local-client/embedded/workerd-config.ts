import { relative } from "node:path";
import { type CapnpValue, capnpEmbed, capnpText } from "./capnp-text.ts";

/**
 * The configuration workerd runs the embedded worker (and `planport serve`) from: planport's
 * own, not a development server's. Pure: the same inputs give the same text.
 *
 * Why not Miniflare's: Miniflare is a development server. Besides the port it is asked for, it
 * opens a loopback HTTP server for workerd's call-backs that asks for no credential and answers
 * with files' lines (`/core/error`) or writes files (`/core/store-temp-file`), and its entry
 * worker adds development routes (`/cdn-cgi/…`) in front of the worker. A daemon a user leaves
 * running for days on a shared machine must not carry any of that. This config has one
 * socket — the one the host bound and handed to workerd — and no external service at all:
 * nothing workerd calls back, nothing another user could reach but the worker's own API.
 *
 * What it holds is what wrangler.toml declares, as wrangler reads it (`dist/worker/options.json`,
 * written by the build), laid out on disk the way `wrangler dev --persist-to DIR` lays it out,
 * so one state folder serves both and sessions survive the change:
 *
 * - the worker's module (`dist/worker/index.js`), its vars, and the variables of the env file;
 * - SQLite Durable Objects in `DIR/v3/do/<worker>-<Class>/` (workerd's own storage);
 * - R2 buckets through Miniflare's R2 object (`DIR/v3/r2/`), copied into `dist/` by the build;
 * - rate-limiting bindings through Miniflare's in-memory limiter module, as `wrangler dev` has
 *   them;
 * - static assets (wrangler.toml `[assets]`) served first by a small router of ours
 *   (runtime/assets.ts) from a read-only folder, with the headers of `_headers`.
 *
 * Anything else wrangler.toml could declare (KV, D1, queues, …) is refused by
 * {@link unsupportedOptions}: the embedded worker must never start with a binding missing.
 */

/** What `npm run build` stores beside the bundle: wrangler's reading of wrangler.toml. */
export interface BuiltWorker {
  name: string;
  main: string;
  options: Record<string, unknown> & {
    compatibilityDate?: string;
    compatibilityFlags?: string[];
    bindings?: Record<string, unknown>;
    durableObjects?: Record<string, { className: string; useSQLite?: boolean } | string>;
    r2Buckets?: Record<string, { id: string } | string>;
    ratelimits?: Record<string, { simple: { limit: number; period: number } }>;
    assets?: { directory: string; binding?: string };
  };
}

/** The static assets' index, made by the build (scripts/assets-manifest.ts). */
export interface AssetsManifest {
  /** URL path → the file under the assets folder, its type, entity tag and headers. */
  files: Record<string, { file: string; type: string; etag: string; headers: [string, string][] }>;
}

export interface WorkerdConfigInput {
  built: BuiltWorker;
  /** Folder the config file is written to: embedded files are named relative to it. */
  configDir: string;
  /** The worker's bundle (dist/worker/index.js). */
  workerModule: string;
  /** The runtime modules the build copied (dist/worker/runtime/). */
  runtimeDir: string;
  /** The static assets' folder and index, when wrangler.toml has `[assets]`. */
  assets: { directory: string; manifest: AssetsManifest } | null;
  /** The state folder: `v3/do` and `v3/r2` under it. */
  persistDir: string;
  /** Vars and secrets over wrangler.toml's vars (the env file's, then the caller's). */
  vars: Record<string, string>;
}

/** The names of the socket and services, for the host's `--socket-fd`. */
export const SOCKET_NAME = "http";
const ROUTER = "planport:router";
const ASSETS = "planport:assets";
const ASSETS_DISK = "planport:assets-disk";
const DO_STORAGE = "do:storage";
const R2_STORAGE = "r2:storage";
const R2_OBJECT_SERVICE = "r2:bucket";
const R2_OBJECT_CLASS = "R2BucketObject";
const RATE_LIMIT_MODULE = "planport-internal:ratelimit";
const NO_NETWORK = "planport:no-network";
const ASSETS_DATE = "2026-04-20";
/** Miniflare's date for its storage objects; their code expects it. */
const MINIFLARE_OBJECT_DATE = "2023-07-24";

/** The files of runtime/ the config names (the build copies or bundles each). */
export const RUNTIME_MODULES = {
  shared: "miniflare-shared.worker.js",
  zod: "miniflare-zod.worker.js",
  r2Bucket: "miniflare-r2-bucket.worker.js",
  objectEntry: "miniflare-object-entry.worker.js",
  rateLimit: "miniflare-ratelimit.worker.js",
  assets: "assets.js",
} as const;

/** Option keys that declare nothing when empty, and the ones this config knows how to run. */
const SUPPORTED = new Set([
  "compatibilityDate",
  "compatibilityFlags",
  "modulesRules",
  "bindings",
  "durableObjects",
  "r2Buckets",
  "ratelimits",
  "assets",
]);

/**
 * The option keys of wrangler's reading that declare something this config cannot run; empty
 * when it runs everything wrangler.toml declares.
 *
 * @example
 * unsupportedOptions({ kvNamespaces: { CACHE: "id" } }) // → ["kvNamespaces"]
 */
export function unsupportedOptions(options: Record<string, unknown>): string[] {
  return Object.entries(options)
    .filter(([key, value]) => !SUPPORTED.has(key) && declaresSomething(value))
    .map(([key]) => key);
}

function declaresSomething(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.values(value).some(declaresSomething);
  return true;
}

/**
 * The config file's text, and the state folders it names (workerd needs them to exist).
 *
 * @example
 * const { text, directories } = workerdConfig({ built, configDir, workerModule, runtimeDir, assets, persistDir, vars });
 * for (const dir of directories) mkdirSync(dir, { recursive: true, mode: 0o700 });
 * writeFileSync(join(configDir, "workerd.capnp"), text, { mode: 0o600 });
 */
export function workerdConfig(input: WorkerdConfigInput): { text: string; directories: string[] } {
  const { built } = input;
  const unsupported = unsupportedOptions(built.options);
  if (unsupported.length > 0) {
    throw new Error(
      `wrangler.toml declares what the embedded worker cannot run: ${unsupported.join(", ")}`,
    );
  }
  const embed = (path: string) => capnpEmbed(relative(input.configDir, path));
  const runtime = (name: keyof typeof RUNTIME_MODULES) =>
    embed(`${input.runtimeDir}/${RUNTIME_MODULES[name]}`);
  const o = built.options;

  const durableObjects = Object.entries(o.durableObjects ?? {}).map(([binding, d]) => ({
    binding,
    ...(typeof d === "string" ? { className: d, useSQLite: false } : d),
  }));
  const r2Buckets = Object.entries(o.r2Buckets ?? {}).map(([binding, b]) => ({
    binding,
    id: typeof b === "string" ? b : b.id,
  }));
  const rateLimits = Object.entries(o.ratelimits ?? {});

  const bindings: CapnpValue[] = [];
  for (const [name, value] of Object.entries({ ...o.bindings, ...input.vars })) {
    bindings.push(
      typeof value === "string" ? { name, text: value } : { name, json: JSON.stringify(value) },
    );
  }
  for (const d of durableObjects) {
    bindings.push({ name: d.binding, durableObjectNamespace: { className: d.className } });
  }
  for (const b of r2Buckets)
    bindings.push({ name: b.binding, r2Bucket: { name: r2Service(b.id) } });
  for (const [name, limit] of rateLimits) {
    bindings.push({
      name,
      wrapped: {
        moduleName: RATE_LIMIT_MODULE,
        innerBindings: [
          { name: "namespaceId", json: JSON.stringify(name) },
          { name: "limit", json: JSON.stringify(limit.simple.limit) },
          { name: "period", json: JSON.stringify(limit.simple.period) },
        ],
      },
    });
  }
  if (input.assets !== null && o.assets?.binding !== undefined) {
    bindings.push({ name: o.assets.binding, service: { name: ASSETS } });
  }

  const services: CapnpValue[] = [
    {
      name: built.name,
      worker: {
        modules: [{ name: built.main, esModule: embed(input.workerModule) }],
        compatibilityDate: o.compatibilityDate,
        compatibilityFlags: o.compatibilityFlags ?? [],
        bindings,
        durableObjectNamespaces:
          durableObjects.length === 0
            ? undefined
            : durableObjects.map((d) => ({
                className: d.className,
                // Part of the path on disk: the one `wrangler dev` uses.
                uniqueKey: `${built.name}-${d.className}`,
                enableSql: d.useSQLite === true,
              })),
        durableObjectStorage: durableObjects.length === 0 ? undefined : { localDisk: DO_STORAGE },
        globalOutbound: { name: "internet" },
      },
    },
    {
      name: ROUTER,
      worker: assetsWorker(runtime("assets"), input.assets?.manifest ?? null, [
        { name: "WORKER", service: { name: built.name } },
      ]),
    },
    { name: NO_NETWORK, network: { allow: [] } },
    {
      // What the worker may fetch: model APIs and webhooks, on any address `wrangler dev` allows.
      name: "internet",
      network: {
        allow: ["public", "private", "240.0.0.0/4"],
        tlsOptions: { trustBrowserCas: true },
      },
    },
  ];
  const directories: string[] = [];
  if (durableObjects.length > 0) {
    directories.push(`${input.persistDir}/v3/do`);
    services.push({
      name: DO_STORAGE,
      disk: { path: `${input.persistDir}/v3/do`, writable: true },
    });
  }
  if (r2Buckets.length > 0) {
    directories.push(`${input.persistDir}/v3/r2`);
    services.push(
      { name: R2_STORAGE, disk: { path: `${input.persistDir}/v3/r2`, writable: true } },
      {
        name: R2_OBJECT_SERVICE,
        worker: {
          modules: [{ name: "bucket.worker.js", esModule: runtime("r2Bucket") }],
          compatibilityDate: MINIFLARE_OBJECT_DATE,
          compatibilityFlags: ["nodejs_compat", "experimental"],
          bindings: [{ name: "MINIFLARE_BLOBS", service: { name: R2_STORAGE } }],
          durableObjectNamespaces: [
            {
              className: R2_OBJECT_CLASS,
              uniqueKey: `miniflare-${R2_OBJECT_CLASS}`,
              enableSql: true,
            },
          ],
          durableObjectStorage: { localDisk: R2_STORAGE },
          globalOutbound: { name: "internet" },
        },
      },
      ...r2Buckets.map((b) => ({
        name: r2Service(b.id),
        worker: {
          modules: [{ name: "object-entry.worker.js", esModule: runtime("objectEntry") }],
          compatibilityDate: MINIFLARE_OBJECT_DATE,
          bindings: [
            { name: "MINIFLARE_NAMESPACE", text: b.id },
            {
              name: "MINIFLARE_OBJECT",
              durableObjectNamespace: {
                className: R2_OBJECT_CLASS,
                serviceName: R2_OBJECT_SERVICE,
              },
            },
          ],
          globalOutbound: { name: "internet" },
        },
      })),
    );
  }
  if (input.assets !== null) {
    services.push(
      { name: ASSETS_DISK, disk: { path: input.assets.directory, writable: false } },
      { name: ASSETS, worker: assetsWorker(runtime("assets"), input.assets.manifest, []) },
    );
  }

  const extensions: CapnpValue[] = [];
  if (r2Buckets.length > 0) {
    extensions.push({
      modules: [
        { name: "miniflare:shared", esModule: runtime("shared") },
        { name: "miniflare:zod", esModule: runtime("zod") },
      ],
    });
  }
  if (rateLimits.length > 0) {
    extensions.push({
      modules: [{ name: RATE_LIMIT_MODULE, esModule: runtime("rateLimit"), internal: true }],
    });
  }

  const config: CapnpValue = {
    services,
    sockets: [
      // The address is a placeholder: the host hands workerd the socket it bound (--socket-fd).
      { name: SOCKET_NAME, address: "127.0.0.1:0", http: {}, service: { name: ROUTER } },
    ],
    extensions: extensions.length === 0 ? undefined : extensions,
  };
  const text = [
    "# Written by planport for the embedded worker (local-client/embedded/workerd-config.ts).",
    'using Workerd = import "/workerd/workerd.capnp";',
    `const config :Workerd.Config = ${capnpText(config)};`,
    "",
  ].join("\n");
  return { text, directories };
}

function r2Service(id: string): string {
  return `${R2_OBJECT_SERVICE}:${id}`;
}

/**
 * The assets router (with `WORKER` behind it) or the assets alone (the worker's binding).
 * Neither fetches anything but its bindings: their outbound network allows nothing.
 */
function assetsWorker(
  module: CapnpValue,
  manifest: AssetsManifest | null,
  extra: CapnpValue[],
): CapnpValue {
  return {
    modules: [{ name: "assets.js", esModule: module }],
    compatibilityDate: ASSETS_DATE,
    bindings: [
      { name: "MANIFEST", json: JSON.stringify(manifest ?? { files: {} }) },
      ...(manifest === null ? [] : [{ name: "DISK", service: { name: ASSETS_DISK } }]),
      ...extra,
    ],
    globalOutbound: { name: NO_NETWORK },
  };
}
