import { DockerClient } from "../../local-client/execution/docker.ts";
import { buildExecImage, defaultImageName } from "../../local-client/execution/image.ts";
import { buildDist } from "../../scripts/build.ts";

/**
 * The node tests run the built command (local-client/bin/planport.js → dist/) and the built
 * embedded worker, as a user does: this set-up rebuilds dist/ first when a source changed
 * since the last build (scripts/build.ts), so a test never runs yesterday's code. Then, where
 * Docker answers, the execution image of this runner (`npm run container:image`; reused when
 * current, a first build takes minutes) for the cloud-execution tests; where it does not, those
 * tests fail with the executor's own sentence saying so.
 */
export default async function setup(): Promise<void> {
  await buildDist({ ifStale: true });
  const docker = new DockerClient();
  try {
    await docker.ping();
  } catch (err) {
    process.stderr.write(
      `planport tests: Docker does not answer (${String(err)}); the cloud-execution tests need it (.ci/run starts dockerd)\n`,
    );
    return;
  }
  await buildExecImage(docker, {
    image: defaultImageName(),
    progress: (line) => process.stderr.write(`planport tests: ${line}\n`),
  });
}
