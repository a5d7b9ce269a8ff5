import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type BuiltWorker,
  unsupportedOptions,
  workerdConfig,
} from "../../../local-client/embedded/workerd-config.ts";
import { PACKAGE_ROOT } from "../../../local-client/package-root.ts";
import { assetsManifest, headersFor, parseHeadersFile } from "../../../scripts/assets-manifest.ts";

const built = JSON.parse(
  readFileSync(join(PACKAGE_ROOT, "dist", "worker", "options.json"), "utf8"),
) as BuiltWorker;

function configFor(overrides: Partial<Parameters<typeof workerdConfig>[0]> = {}) {
  return workerdConfig({
    built,
    configDir: "/data/planport/embedded",
    workerModule: "/pkg/dist/worker/index.js",
    runtimeDir: "/pkg/dist/worker/runtime",
    assets: { directory: "/pkg/public", manifest: assetsManifest(join(PACKAGE_ROOT, "public")) },
    persistDir: "/data/planport/persist",
    vars: { PLANPORT_TOKENS: "pp_secret", PLANPORT_PLANNER: "offline" },
    ...overrides,
  });
}

describe("the embedded worker's workerd config", () => {
  it("runs everything wrangler.toml declares", () => {
    expect(unsupportedOptions(built.options)).toEqual([]);
  });

  it("refuses a binding kind it cannot run instead of starting without it", () => {
    expect(unsupportedOptions({ kvNamespaces: { CACHE: "id" }, d1Databases: {} })).toEqual([
      "kvNamespaces",
    ]);
    expect(() =>
      configFor({ built: { ...built, options: { ...built.options, queueProducers: ["q"] } } }),
    ).toThrow(/cannot run: queueProducers/);
  });

  it("has one socket and no external service: nothing workerd calls back, nothing else listening", () => {
    const { text } = configFor();
    expect(text.match(/sockets = \[/g)).toHaveLength(1);
    expect(text).toContain('sockets = [(name = "http", address = "127.0.0.1:0"');
    expect(text).not.toMatch(/external\s*=/);
    expect(text).not.toContain("loopback");
    // Miniflare's entry worker (its /cdn-cgi/ routes and error pages) is not there.
    expect(text).not.toContain("core:entry");
  });

  it("keeps state where `wrangler dev --persist-to` keeps it, so sessions carry over", () => {
    const { text, directories } = configFor();
    expect(directories).toEqual(["/data/planport/persist/v3/do", "/data/planport/persist/v3/r2"]);
    expect(text).toContain(
      '(className = "SessionObject", uniqueKey = "planport-SessionObject", enableSql = true)',
    );
    expect(text).toContain(
      '(className = "OwnerIndex", uniqueKey = "planport-OwnerIndex", enableSql = true)',
    );
    expect(text).toContain('uniqueKey = "miniflare-R2BucketObject"');
    expect(text).toContain('(name = "MINIFLARE_NAMESPACE", text = "planport-snapshots")');
  });

  it("runs wrangler.toml's container class as an ordinary Durable Object, with no container", () => {
    // Cloudflare Containers run only on Cloudflare; the embedded worker's commands go to the
    // local executor (docs/EXECUTION.md), and the build reads wrangler.toml with containers off.
    expect(built.options.durableObjects?.EXECUTOR_CONTAINERS).toEqual({
      className: "CommandContainer",
      useSQLite: true,
    });
    const { text } = configFor();
    expect(text).toContain(
      '(className = "CommandContainer", uniqueKey = "planport-CommandContainer", enableSql = true)',
    );
    expect(text).toContain(
      '(name = "EXECUTOR_CONTAINERS", durableObjectNamespace = (className = "CommandContainer"))',
    );
    expect(text).not.toMatch(/container\s*=\s*\(|containerEngine/);
  });

  it("gives the worker wrangler.toml's vars, overridden by the env file's", () => {
    const { text } = configFor({ vars: { PLANPORT_PLANNER: "offline", PLANPORT_TOKENS: "t" } });
    expect(text).toContain('(name = "PLANPORT_PLANNER", text = "offline")');
    expect(text).not.toContain('(name = "PLANPORT_PLANNER", text = "auto")');
    expect(text).toContain('(name = "PLANPORT_RETENTION_DAYS", text = "7")');
  });

  it("names files relative to the config's folder", () => {
    const { text } = configFor();
    expect(text).toContain('esModule = embed "../../../pkg/dist/worker/index.js"');
    expect(text).toContain(
      'embed "../../../pkg/dist/worker/runtime/miniflare-r2-bucket.worker.js"',
    );
  });

  it("runs without assets when wrangler.toml has none", () => {
    const { text } = configFor({ assets: null });
    expect(text).not.toContain("planport:assets-disk");
    expect(text).toContain('(name = "MANIFEST", json = "{\\"files\\":{}}")');
  });
});

describe("the static assets' index", () => {
  it("reads _headers rules and applies each matching one", () => {
    const rules = parseHeadersFile(
      "# comment\n/review/vendor/*\n  X-Content-Type-Options: nosniff\n  Referrer-Policy: no-referrer\n/exact.js\n  A: 1\n",
    );
    expect(headersFor("/review/vendor/mermaid.min.js", rules)).toEqual([
      ["X-Content-Type-Options", "nosniff"],
      ["Referrer-Policy", "no-referrer"],
    ]);
    expect(headersFor("/exact.js", rules)).toEqual([["A", "1"]]);
    expect(headersFor("/review/other.js", rules)).toEqual([]);
    expect(headersFor("/a/b/c", [{ pattern: "/a/*/c", headers: [["B", "2"]] }])).toEqual([
      ["B", "2"],
    ]);
    expect(headersFor("/a/c", [{ pattern: "/a/*/c", headers: [["B", "2"]] }])).toEqual([]);
  });

  it("refuses syntax it does not implement rather than dropping a rule", () => {
    expect(() => parseHeadersFile("/a/:name\n  X: 1\n")).toThrow(/line 1/);
    expect(() => parseHeadersFile("  X: 1\n")).toThrow(/under a path/);
    expect(() => parseHeadersFile("/a\n  ! X\n")).toThrow(/line 2/);
  });

  it("indexes the package's public folder with types, tags and headers", () => {
    const manifest = assetsManifest(join(PACKAGE_ROOT, "public"));
    expect(Object.keys(manifest.files)).toEqual(["/review/vendor/mermaid.min.js"]);
    expect(manifest.files["/review/vendor/mermaid.min.js"]).toEqual({
      file: "review/vendor/mermaid.min.js",
      type: "text/javascript; charset=utf-8",
      etag: expect.stringMatching(/^"[0-9a-f]{32}"$/),
      headers: [
        ["X-Content-Type-Options", "nosniff"],
        ["Referrer-Policy", "no-referrer"],
      ],
    });
  });
});
