import type { ExecutorHealth } from "../../src/protocol/execution.ts";
import { BUILD_IMAGE_COMMAND, IMAGE_DIGEST_LABEL } from "./image.ts";

/**
 * The local executor's health sentences (pure): what went wrong, said so a user can act on it.
 */

/** Why Docker did not answer, from the socket error's code. */
export function dockerUnavailable(socketPath: string, code: string | undefined, detail: string) {
  if (code === "EACCES" || code === "EPERM") {
    return (
      `Docker is not available to this user: permission denied on ${socketPath}. ` +
      "Add yourself to the docker group (sudo usermod -aG docker $USER, then log in again), " +
      "or run planport as a user who may use Docker."
    );
  }
  if (code === "EUNSUPPORTED") return detail;
  return (
    `Docker is not available: nothing answers at ${socketPath}. ` +
    "Install Docker and start it (dockerd), or set DOCKER_HOST=unix:///path to its socket. " +
    'Without Docker, "Approve and run in the cloud" can still edit files without running commands.'
  );
}

/**
 * The health answer once Docker answered: whether the image is there and, for planport's own
 * image, whether it carries the current runner.
 */
export function imageHealth(
  image: string,
  labels: Record<string, string> | undefined,
  wanted: { ownImage: boolean; digest: string | undefined },
): ExecutorHealth {
  if (labels === undefined) {
    const how = wanted.ownImage
      ? `build it with \`${BUILD_IMAGE_COMMAND}\` (or \`npm run container:image\` in a clone)`
      : "build it, or unset PLANPORT_EXEC_IMAGE to use planport's own";
    return {
      ok: false,
      executor: "docker",
      image,
      reason: `The execution image ${image} is missing: ${how}.`,
    };
  }
  if (
    wanted.ownImage &&
    wanted.digest !== undefined &&
    labels[IMAGE_DIGEST_LABEL] !== wanted.digest
  ) {
    return {
      ok: false,
      executor: "docker",
      image,
      reason: `The execution image ${image} is out of date (built from another runner): rebuild it with \`${BUILD_IMAGE_COMMAND}\`.`,
    };
  }
  return { ok: true, executor: "docker", image };
}
