import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { capnpEmbed, capnpText } from "../../local-client/embedded/capnp-text.ts";
import { workerdBinary } from "../../local-client/embedded/workerd-binary.ts";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";

/**
 * The floor of the embedded worker's cold start (P11): the same runtime started the same way as
 * the worker host (a Node process that writes a workerd config and starts workerd on it), with
 * an empty worker that answers every request. The bench bundles this file and times it from
 * spawn to its first answer.
 *
 * Usage: node empty-worker-host.mjs <port>
 */

const port = Number(process.argv[2]);
// The built worker's runtime settings (compatibility date and flags), without its code.
const { options } = JSON.parse(
  readFileSync(join(PACKAGE_ROOT, "dist", "worker", "options.json"), "utf8"),
) as { options: { compatibilityDate: string; compatibilityFlags: string[] } };
const dir = mkdtempSync(join(tmpdir(), "planport-floor-"));
writeFileSync(
  join(dir, "empty.js"),
  "export default { fetch() { return Response.json({ ok: true }); } }",
);
const config = capnpText({
  services: [
    {
      name: "main",
      worker: {
        modules: [{ name: "empty.js", esModule: capnpEmbed("empty.js") }],
        compatibilityDate: options.compatibilityDate,
        compatibilityFlags: options.compatibilityFlags,
      },
    },
  ],
  sockets: [{ name: "http", address: `127.0.0.1:${port}`, http: {}, service: { name: "main" } }],
});
writeFileSync(
  join(dir, "config.capnp"),
  `using Workerd = import "/workerd/workerd.capnp";\nconst config :Workerd.Config = ${config};\n`,
);
const runtime = spawn(workerdBinary(), ["serve", "--experimental", "config.capnp"], {
  cwd: dir,
  env: { LANG: "C.UTF-8" },
  stdio: "ignore",
});
const stop = () => {
  runtime.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", stop);
runtime.on("exit", () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
