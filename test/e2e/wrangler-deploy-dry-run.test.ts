import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { PACKAGE_ROOT } from "../../local-client/embedded/worker-process.ts";
import { bundleImageReference, writeBundleConfig } from "../../scripts/bundle-config.ts";

/**
 * `wrangler deploy --dry-run` bundles the worker with its container class, and wrangler
 * accepts wrangler.toml's `[[containers]]` declaration.
 *
 * The dry run is of the bundle config (scripts/bundle-config.ts: wrangler.toml with each
 * Dockerfile image given as an image reference), because a dry run of wrangler.toml itself
 * builds the image first (`docker build --load`: Docker with buildx and the base image from a
 * registry — neither here nor in CI). wrangler.toml's own declaration, Dockerfile path included,
 * is checked by wrangler's config reader.
 */

const wrangler = join(PACKAGE_ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const dir = mkdtempSync(join(tmpdir(), "planport-dry-run-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("wrangler deploy --dry-run", () => {
  it("bundles the container class and lists the container beside its Durable Object binding", () => {
    const out = join(dir, "out");
    const run = spawnSync(
      process.execPath,
      [
        wrangler,
        "deploy",
        "--dry-run",
        "--outdir",
        out,
        "--config",
        writeBundleConfig(PACKAGE_ROOT, dir),
      ],
      {
        cwd: PACKAGE_ROOT,
        encoding: "utf8",
        env: {
          ...process.env,
          WRANGLER_SEND_METRICS: "false",
          WRANGLER_LOG_PATH: join(dir, "logs"),
          NO_COLOR: "1",
          CI: "true",
        },
      },
    );
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/env\.EXECUTOR_CONTAINERS \(CommandContainer\)\s+Durable Object/);
    expect(run.stdout).toContain("The following containers are available:");
    expect(run.stdout).toContain(
      `planport-commandcontainer (${bundleImageReference("CommandContainer")})`,
    );
    expect(run.stdout).not.toContain("Building image");

    const bundle = readFileSync(join(out, "index.js"), "utf8");
    expect(bundle).toMatch(/\bas CommandContainer\b|export \{[^}]*\bCommandContainer\b/);
    // The package's Container class came along (its start probe's host name).
    expect(bundle).toContain("containerstarthealthcheck");
  });

  it("wrangler accepts wrangler.toml's [[containers]]: the class, a Dockerfile that exists, the limits", () => {
    const config = unstable_readConfig({ config: join(PACKAGE_ROOT, "wrangler.toml") });
    expect(config.containers).toHaveLength(1);
    const [container] = config.containers ?? [];
    expect(container?.class_name).toBe("CommandContainer");
    expect(container?.image).toBe(join(PACKAGE_ROOT, "container", "Dockerfile"));
    expect(existsSync(container?.image ?? "")).toBe(true);
    expect(container?.instance_type).toBe("standard-1");
    expect(container?.max_instances).toBeGreaterThan(0);
    expect(config.dev.enable_containers).toBe(false);
    const binding = config.durable_objects.bindings.find(
      (b: { class_name: string }) => b.class_name === "CommandContainer",
    );
    expect(binding?.name).toBe("EXECUTOR_CONTAINERS");
    expect(
      config.migrations.flatMap(
        (m: { new_sqlite_classes?: string[] }) => m.new_sqlite_classes ?? [],
      ),
    ).toContain("CommandContainer");
  });
});
