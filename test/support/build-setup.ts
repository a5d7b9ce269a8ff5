import { buildDist } from "../../scripts/build.ts";

/**
 * The node tests run the built command (local-client/bin/planport.js → dist/) and the built
 * embedded worker, as a user does: this set-up rebuilds dist/ first when a source changed
 * since the last build (scripts/build.ts), so a test never runs yesterday's code.
 */
export default async function setup(): Promise<void> {
  await buildDist({ ifStale: true });
}
