import { DockerClient } from "../local-client/execution/docker.ts";
import { buildExecImage, defaultImageName } from "../local-client/execution/image.ts";
import { buildDist } from "./build.ts";

/**
 * Builds the local execution image (docs/EXECUTION.md "The image"): dist/ first when stale (the
 * runner bundle goes into the image), then `planport-exec:<version>` from container/Dockerfile
 * — reused when it already carries the current Dockerfile and runner. The image name can be
 * given as the one argument.
 *
 * @example
 * npm run container:image
 */
await buildDist({ ifStale: true });
const image = process.argv[2] ?? process.env.PLANPORT_EXEC_IMAGE ?? defaultImageName();
const started = performance.now();
const outcome = await buildExecImage(new DockerClient(), {
  image,
  progress: (line) => process.stderr.write(`${line}\n`),
});
process.stderr.write(
  `planport: ${image} ${outcome} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);
