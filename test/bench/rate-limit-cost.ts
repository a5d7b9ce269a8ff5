import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { quantile } from "./rows.ts";

/**
 * What the rate limiter costs one terminal poll: two `wrangler dev` workers, one with
 * PLANPORT_RATE_LIMITS=off, one with the wrangler.toml limits on, each polled for an empty page
 * at a pace under the limit (one poll every PAUSE_MS), interleaved with `GET /v1/healthz`, in
 * alternating order so a noisy neighbour slows both alike. Prints the p50s and their ratios.
 *
 * Run: `npx tsx test/bench/rate-limit-cost.ts [samples]`
 */

const SAMPLES = Number(process.argv[2] ?? 1_500);
const PAUSE_MS = 15;
const TOKEN = "rate-cost";

async function start(limits: "on" | "off"): Promise<{ worker: WorkerProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), `planport-rate-cost-${limits}-`));
  const worker = await startWorkerProcess({
    persistDir: dir,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline", PLANPORT_RATE_LIMITS: limits },
  });
  return { worker, dir };
}

async function emptyPollProbe(url: string): Promise<() => Promise<void>> {
  const auth = { authorization: `Bearer ${TOKEN}` };
  const created = await fetch(`${url}/v1/sessions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "Which database does this use?" }),
  });
  const { id } = (await created.json()) as { id: string };
  await sleep(1_000);
  const page = (await (
    await fetch(`${url}/v1/sessions/${id}/events?limit=1000`, { headers: auth })
  ).json()) as {
    last_id: string;
  };
  return async () => {
    const res = await fetch(`${url}/v1/sessions/${id}/events?after_id=${page.last_id}`, {
      headers: auth,
    });
    if (res.status !== 200) throw new Error(`poll answered ${res.status}`);
    await res.arrayBuffer();
  };
}

const off = await start("off");
const on = await start("on");
try {
  const probes = {
    healthzOff: async () =>
      void (await (await fetch(`${off.worker.url}/v1/healthz`)).arrayBuffer()),
    healthzOn: async () => void (await (await fetch(`${on.worker.url}/v1/healthz`)).arrayBuffer()),
    pollOff: await emptyPollProbe(off.worker.url),
    pollOn: await emptyPollProbe(on.worker.url),
  };
  const names = Object.keys(probes) as (keyof typeof probes)[];
  const times = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<
    keyof typeof probes,
    number[]
  >;
  for (let i = 0; i < SAMPLES + 100; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length]!;
      await sleep(PAUSE_MS / names.length);
      const started = performance.now();
      await probes[name]();
      if (i >= 100) times[name].push(performance.now() - started);
    }
  }
  const p50 = (n: keyof typeof probes) => quantile(times[n], 0.5);
  console.log(`| | p50 (ms) | ÷ healthz of the same worker |`);
  console.log(`|---|---|---|`);
  console.log(
    `| empty poll, limits off | ${p50("pollOff").toFixed(3)} | ${(p50("pollOff") / p50("healthzOff")).toFixed(2)}× |`,
  );
  console.log(
    `| empty poll, limits on | ${p50("pollOn").toFixed(3)} | ${(p50("pollOn") / p50("healthzOn")).toFixed(2)}× |`,
  );
  console.log(
    `| healthz off / on | ${p50("healthzOff").toFixed(3)} / ${p50("healthzOn").toFixed(3)} | |`,
  );
  console.log(
    `\nlimits on ÷ off, poll p50: ${(p50("pollOn") / p50("pollOff")).toFixed(2)}× (${SAMPLES} samples each, one poll every ~${PAUSE_MS} ms)`,
  );
} finally {
  await off.worker.stop();
  await on.worker.stop();
  rmSync(off.dir, { recursive: true, force: true });
  rmSync(on.dir, { recursive: true, force: true });
}
