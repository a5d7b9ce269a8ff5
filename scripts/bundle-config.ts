import { writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { experimental_readRawConfig } from "wrangler";

/**
 * wrangler.toml as a config that `wrangler deploy --dry-run` bundles without building the
 * container image, for the build (scripts/build.ts) and the dry-run test.
 *
 * Why: with `[[containers]] image = "./container/Dockerfile"`, `wrangler deploy --dry-run`
 * builds the image (`docker build --load --platform linux/amd64 …`: Docker with buildx, and the
 * Dockerfile's base image from a registry) before it writes the bundle, and fails without them.
 * The build runs at every `npm ci` (`prepare`), where Docker may be absent, and it needs the
 * worker's module, never the image. So each container whose image is a Dockerfile gets an image
 * reference instead (wrangler takes a reference as it is in a dry run: nothing is built or
 * pulled), and wrangler still reads and checks the rest of the `[[containers]]` declaration.
 * Paths become absolute (a config resolves them from its own folder).
 *
 * @example
 * const config = writeBundleConfig(ROOT, mkdtempSync(join(tmpdir(), "pp-bundle-")));
 * // npx wrangler deploy --dry-run --outdir dist/worker --config <config>
 */
export function writeBundleConfig(root: string, dir: string): string {
  const { rawConfig } = experimental_readRawConfig({ config: join(root, "wrangler.toml") }) as {
    rawConfig: Record<string, unknown> & {
      main?: string;
      assets?: { directory?: string };
      containers?: { class_name: string; image: string; image_build_context?: string }[];
    };
  };
  const config = {
    ...rawConfig,
    ...(rawConfig.main === undefined ? {} : { main: resolve(root, rawConfig.main) }),
    ...(rawConfig.assets?.directory === undefined
      ? {}
      : { assets: { ...rawConfig.assets, directory: resolve(root, rawConfig.assets.directory) } }),
    ...(rawConfig.containers === undefined
      ? {}
      : {
          // A reference has no build context: the Dockerfile's goes with it.
          containers: rawConfig.containers.map(({ image_build_context, ...c }) =>
            isDockerfile(c.image)
              ? { ...c, image: bundleImageReference(c.class_name) }
              : { ...c, ...(image_build_context !== undefined && { image_build_context }) },
          ),
        }),
  };
  const path = join(dir, "wrangler.json");
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}

/** The reference a Dockerfile image is replaced with: never pulled or built by a dry run. */
export function bundleImageReference(className: string): string {
  return `planport-bundle/${className.toLowerCase()}:dry-run`;
}

/** An image given as a path (what wrangler builds) rather than a `registry/name:tag`. */
function isDockerfile(image: string): boolean {
  return image.startsWith(".") || isAbsolute(image) || /(^|\/)Dockerfile[^/:]*$/.test(image);
}
