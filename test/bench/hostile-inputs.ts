import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorkerProcess } from "../../local-client/embedded/worker-process.ts";
import type { ScriptedTurn, Session } from "../../src/protocol/index.ts";
import { renderPlanMarkdown } from "../../src/review/markdown.ts";
import { abCorpus } from "../support/ab-corpus.ts";
import { ApiClient } from "../support/api-client.ts";
import { waitUntil } from "../support/faults.ts";
import { tarGz } from "../support/tarballs.ts";
import { type BenchRow, formatTable, limitRow, median } from "./rows.ts";

/**
 * How fast planport stays under hostile input: the speed figures the tests used to assert (the
 * tests now assert what happened — ordering, completion, counted work — never how fast), measured
 * here and recorded in test/bench/RESULTS.md "Hostile input, timed".
 *
 * - H1: the review page's anchors for n identical headings, rendering time at 40,000 over 4,000
 *   (linear ≈ 10×; the old quadratic ids ≈ 100×) — was test/worker/review-markdown.test.ts.
 * - H2–H4: the slowest `GET /v1/healthz` and read of another session while a ReDoS Grep and an
 *   exponential glob run, while a Grep runs to its 10 s budget, and while the offline planner
 *   reads a 100,000-character one-token prompt; and how long each took — was
 *   test/e2e/hostile-patterns.test.ts (2 s and 30 s bounds).
 * - H5: time to plan_ready while the webhook receiver never answers, over the same with a
 *   receiver that answers — was test/e2e/webhooks.test.ts (ratio 4 + 250 ms).
 *
 *   npx tsx test/bench/hostile-inputs.ts
 */

const TOKEN = "bench-hostile-inputs";
const auth = { token: TOKEN };
const SLOW_PATTERN = "[ab]*a[ab]{24}$";

function timed<T>(run: () => T): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** H1: best of three renders at each size. */
function headingRows(): BenchRow[] {
  const render = (n: number) =>
    Math.min(...[1, 2, 3].map(() => timed(() => renderPlanMarkdown("# h\n".repeat(n)))));
  render(2_000);
  const small = render(4_000);
  const large = render(40_000);
  return [
    limitRow({
      id: "H1",
      name: "review page: render 40,000 identical headings over 4,000 (best of 3 each)",
      unit: "×",
      value: large / small,
      baseline: null,
      baselineName: `${small.toFixed(1)} ms at 4,000, ${large.toFixed(1)} ms at 40,000; linear ≈ 10×`,
      atMost: 35,
    }),
  ];
}

async function latency(url: string, headers: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return performance.now() - started;
}

/** The slowest healthz and bystander read while `work` runs, and how long it took. */
async function probeWhile(
  url: string,
  bystander: string,
  work: Promise<unknown>,
): Promise<{ healthz: number; session: number; ms: number }> {
  const started = performance.now();
  let done = false;
  const finished = work.finally(() => {
    done = true;
  });
  let healthz = 0;
  let session = 0;
  while (!done) {
    healthz = Math.max(healthz, await latency(`${url}/v1/healthz`));
    session = Math.max(
      session,
      await latency(`${url}/v1/sessions/${bystander}`, { authorization: `Bearer ${TOKEN}` }),
    );
    await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
  await finished;
  return { healthz, session, ms: performance.now() - started };
}

async function settled(api: ApiClient, id: string): Promise<Session> {
  return waitUntil(
    async () => {
      const s = await api.getSession(auth, id);
      return s.status === "running" ? undefined : s;
    },
    { what: `session ${id} to stop running`, timeoutMs: 300_000, everyMs: 50 },
  );
}

/** H2–H5 against one `wrangler dev`, its webhooks sent to a receiver that answers or hangs. */
async function workerRows(): Promise<BenchRow[]> {
  const held: ServerResponse[] = [];
  const receiver = { hang: false };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", () => (receiver.hang ? held.push(res) : res.writeHead(204).end()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const hooks = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const persistDir = mkdtempSync(join(tmpdir(), "planport-bench-hostile-"));
  const worker = await startWorkerProcess({
    persistDir,
    vars: {
      PLANPORT_TOKENS: TOKEN,
      PLANPORT_ALLOW_SCRIPTED: "true",
      PLANPORT_WEBHOOK_URL: hooks,
      PLANPORT_WEBHOOK_SECRET: "bench-hostile-inputs-secret-0123456789",
    },
  });
  const api = new ApiClient((request) => fetch(request), worker.url);
  try {
    const upload = async (files: { name: string; body: string }[]) =>
      ((await (await api.uploadSnapshot(auth, await tarGz(files))).json()) as { id: string }).id;
    const shared = await upload([
      { name: "redos.txt", body: `${"a".repeat(48)}!\n` },
      { name: "src/app.ts", body: "export const app = 1;\n" },
    ]);
    const slow = await upload(abCorpus(8));
    const wait: ScriptedTurn = { content: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] };
    const bystander = (
      await api.createSession(auth, { prompt: "Wait", planner: "scripted", script: [wait] })
    ).id;
    await settled(api, bystander);
    const call = (name: string, input: Record<string, unknown>): ScriptedTurn => ({
      content: [{ type: "tool_use", name, input }],
    });
    const scripted = async (script: ScriptedTurn[], snapshot_id: string) =>
      settled(
        api,
        (
          await api.createSession(auth, {
            prompt: "Search",
            planner: "scripted",
            snapshot_id,
            script,
          })
        ).id,
      );
    const offline = async (prompt: string, snapshot_id?: string) =>
      settled(api, (await api.createSession(auth, { prompt, planner: "offline", snapshot_id })).id);

    const runs = [
      {
        id: "H2",
        what: "a ReDoS Grep, an exponential glob and a Grep with that glob",
        work: () =>
          scripted(
            [
              call("Grep", { pattern: "^(a+)+$", output_mode: "content" }),
              call("Glob", { pattern: "*a*a*a*a*a*a*a*a*a*b" }),
              call("Grep", { pattern: "x", glob: "*a*a*a*a*a*a*a*a*a*b" }),
            ],
            shared,
          ),
      },
      {
        id: "H3",
        what: "a Grep that runs to its 10 s budget",
        work: () => scripted([call("Grep", { pattern: SLOW_PATTERN, output_mode: "count" })], slow),
      },
      {
        id: "H4",
        what: "the offline planner on a 100,000-character one-token prompt",
        work: () => offline("a".repeat(100_000), shared),
      },
    ];
    const rows: BenchRow[] = [];
    for (const run of runs) {
      const probed = await probeWhile(worker.url, bystander, run.work());
      rows.push(
        limitRow({
          id: run.id,
          name: `slowest GET /v1/healthz while ${run.what}`,
          unit: "ms",
          value: probed.healthz,
          baseline: null,
          baselineName: `slowest read of another session ${probed.session.toFixed(0)} ms; the work took ${(probed.ms / 1000).toFixed(1)} s (bound 30 s)`,
          atMost: 2_000,
        }),
      );
    }

    const planReady = async () => {
      const started = performance.now();
      await offline("Add a health endpoint to the server");
      return performance.now() - started;
    };
    const answered = [await planReady(), await planReady(), await planReady()];
    receiver.hang = true;
    const hanging = [await planReady(), await planReady(), await planReady()];
    rows.push(
      limitRow({
        id: "H5",
        name: "offline plan to plan_ready while the webhook receiver never answers, median of 3",
        unit: "ms",
        value: median(hanging),
        baseline: median(answered),
        baselineName: "the same with a receiver that answers 204",
        atMost: median(answered) * 4 + 250,
      }),
    );
    return rows;
  } finally {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    server.close();
    await worker.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
}

const rows = [...headingRows(), ...(await workerRows())];
console.log(formatTable(rows));
