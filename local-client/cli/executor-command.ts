import { once } from "node:events";
import { join, resolve } from "node:path";
import { embeddedPaths } from "../embedded/worker.ts";
import { DockerClient, dockerSocket } from "../execution/docker.ts";
import { buildExecImage, defaultImageName } from "../execution/image.ts";
import { startLocalExecutor } from "../execution/server.ts";
import { terminalText } from "../terminal/text.ts";
import { EXIT } from "./exit-codes.ts";
import { commandOutput } from "./output.ts";
import { portFlag } from "./serve.ts";

/**
 * `planport executor`: the local executor in the foreground (docs/EXECUTION.md), for a
 * `wrangler dev` worker — it prints the two `--var` values to give wrangler. Ctrl-C stops it
 * and removes its containers. Its state folder (which names its containers, so a later start
 * removes what a killed one left) is its own, apart from the embedded worker's.
 */
export async function runExecutor(flags: {
  port?: string;
  state?: string;
  buildImage?: boolean;
  json?: boolean;
}): Promise<number> {
  const out = commandOutput(flags.json === true);
  try {
    const port = flags.port === undefined ? 0 : portFlag(flags.port);
    const stateDir = resolve(flags.state ?? join(embeddedPaths().root, "executor"));
    if (flags.buildImage) {
      const image = process.env.PLANPORT_EXEC_IMAGE?.trim() || defaultImageName();
      await buildExecImage(new DockerClient(dockerSocket()), {
        image,
        progress: (line) => out.say(terminalText(line)),
      });
    }
    const executor = await startLocalExecutor({
      stateDir,
      port,
      log: (line) => out.say(`[executor] ${terminalText(line)}`),
    });
    const health = (await (
      await fetch(`${executor.url}/v1/health`, {
        headers: { authorization: `Bearer ${executor.token}` },
      })
    ).json()) as { ok: boolean; reason?: string; image?: string };
    if (out.json) {
      out.result({ event: "executor", url: executor.url, token: executor.token, health });
    } else {
      process.stdout.write(
        `PLANPORT_EXECUTOR_URL=${executor.url}\nPLANPORT_EXECUTOR_TOKEN=${executor.token}\n`,
      );
    }
    out.say(
      (health.ok
        ? `planport executor: ${executor.url}, commands run in ${health.image} (Docker)\n`
        : `planport executor: ${executor.url}, but it cannot run commands yet: ${health.reason}\n`) +
        // Not as `--var` on a command line: other users of the machine read those in `ps`.
        "Give the two lines above to wrangler dev in its .dev.vars file (beside wrangler.toml) or an --env-file, not as --var on the command line, where other users of this machine could read the token.\n" +
        "Ctrl-C stops it and removes its containers.",
    );
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
      await once(stop.signal, "abort");
      await executor.stop();
      return EXIT.ok;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  } catch (err) {
    return out.fail(err);
  }
}
