import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../package-root.ts";
import type { DockerClient } from "./docker.ts";

/**
 * The execution image on this machine: its name, how to tell whether it carries the current
 * runner, and how it is built (container/Dockerfile + dist/container/runner.mjs).
 */

/** The label holding a hash of the Dockerfile and the runner bundle the image was built from. */
export const IMAGE_DIGEST_LABEL = "dev.planport.image-digest";
/** A Debian base made locally with debootstrap where no registry is reachable. */
export const LOCAL_BASE_IMAGE = "planport-base:bookworm";

/**
 * The image's build context (made by `npm run build`: container/Dockerfile and the runner
 * bundle), in the installed package or a clone.
 */
export function imageSources(root = PACKAGE_ROOT): {
  context: string;
  dockerfile: string;
  runner: string;
} {
  const context = join(root, "dist", "container");
  return {
    context,
    dockerfile: join(context, "Dockerfile"),
    runner: join(context, "runner.mjs"),
  };
}

/**
 * `planport-exec:<package version>-<digest>`: each runner gets its own tag, so two planport
 * checkouts or versions on one machine never rebuild each other's image (the digest's first 12
 * characters; without a built runner, the version alone).
 */
export function defaultImageName(root = PACKAGE_ROOT): string {
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    version: string;
  };
  const digest = imageDigest(root);
  return `planport-exec:${version}${digest === undefined ? "" : `-${digest.slice(0, 12)}`}`;
}

/** A hash of what the image is built from (undefined when the runner is not built yet). */
export function imageDigest(root = PACKAGE_ROOT): string | undefined {
  const { dockerfile, runner } = imageSources(root);
  try {
    const hash = createHash("sha256");
    hash.update(readFileSync(dockerfile)).update("\0").update(readFileSync(runner));
    return hash.digest("hex").slice(0, 32);
  } catch {
    return undefined;
  }
}

/** The command a user runs to build (or rebuild) the image. */
export const BUILD_IMAGE_COMMAND = "planport executor --build-image";

/**
 * Builds the execution image unless one with the current digest is present. The base is
 * PLANPORT_EXEC_BASE when set; else `planport-base:bookworm`, made with debootstrap when absent
 * and debootstrap is at hand; else `debian:bookworm-slim` from Docker Hub.
 *
 * @example
 * await buildExecImage(new DockerClient(), { image: "planport-exec:0.1.0", progress: console.log })
 */
export async function buildExecImage(
  docker: DockerClient,
  opts: { image: string; progress: (line: string) => void; root?: string },
): Promise<"reused" | "built"> {
  const root = opts.root ?? PACKAGE_ROOT;
  const digest = imageDigest(root);
  const { context, runner } = imageSources(root);
  if (digest === undefined) {
    throw new Error(`${runner} is missing: run \`npm run build\` first`);
  }
  const labels = await docker.imageLabels(opts.image);
  if (labels?.[IMAGE_DIGEST_LABEL] === digest) {
    opts.progress(`${opts.image} is current (digest ${digest.slice(0, 12)}): reused`);
    return "reused";
  }
  const base = await chooseBase(docker, opts.progress);
  opts.progress(
    `building ${opts.image} on ${base} (a first build installs Debian packages: minutes)…`,
  );
  await streamed(
    "docker",
    [
      "build",
      "--build-arg",
      `BASE=${base}`,
      "--label",
      `${IMAGE_DIGEST_LABEL}=${digest}`,
      "-t",
      opts.image,
      context,
    ],
    opts.progress,
    hasBuildx() ? {} : { DOCKER_BUILDKIT: "0" },
  );
  opts.progress(`built ${opts.image}`);
  return "built";
}

async function chooseBase(docker: DockerClient, progress: (line: string) => void): Promise<string> {
  const chosen = process.env.PLANPORT_EXEC_BASE?.trim();
  if (chosen) return chosen;
  if ((await docker.imageLabels(LOCAL_BASE_IMAGE)) !== undefined) return LOCAL_BASE_IMAGE;
  if (spawnSync("debootstrap", ["--version"]).status !== 0) {
    progress(
      `no ${LOCAL_BASE_IMAGE} and no debootstrap: building on debian:bookworm-slim (Docker Hub)`,
    );
    return "debian:bookworm-slim";
  }
  const dir = mkdtempSync(join(tmpdir(), "planport-base-"));
  // debootstrap makes a root file system: root's work (sudo -n for another user, CI's way).
  const root = process.getuid?.() === 0 ? "" : "sudo -n ";
  try {
    progress(`making ${LOCAL_BASE_IMAGE} with debootstrap (a few minutes)…`);
    await streamed(
      "sh",
      ["-c", `${root}debootstrap --variant=minbase bookworm "$1"`, "sh", dir],
      progress,
    );
    progress(`importing ${LOCAL_BASE_IMAGE} into Docker…`);
    await streamed(
      "sh",
      ["-c", `${root}tar -C "$1" -c . | docker import - "$2"`, "sh", dir, LOCAL_BASE_IMAGE],
      progress,
    );
  } finally {
    await streamed("sh", ["-c", `${root}rm -rf "$1"`, "sh", dir], progress).catch(() =>
      rmSync(dir, { recursive: true, force: true }),
    );
  }
  return LOCAL_BASE_IMAGE;
}

function hasBuildx(): boolean {
  return spawnSync("docker", ["buildx", "version"], { stdio: "ignore" }).status === 0;
}

/** Runs a program, passing each output line to `progress`; fails on a non-zero exit. */
function streamed(
  file: string,
  args: string[],
  progress: (line: string) => void,
  env: NodeJS.ProcessEnv = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let tail = "";
    const onData = (chunk: Buffer): void => {
      const lines = (tail + chunk.toString("utf8")).split("\n");
      tail = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") progress(line);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", reject);
    child.on("close", (code) => {
      if (tail.trim() !== "") progress(tail);
      if (code === 0) resolve();
      else reject(new Error(`${file} ${args[0]} failed (exit ${code}); its output is above`));
    });
  });
}
