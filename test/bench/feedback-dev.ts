import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { step } from "../../src/planner/loop.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { MemoryPort } from "../support/memory-port.ts";

function walk(dir: string, root = dir, out: Record<string, string> = {}) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, root, out);
    else out[relative(root, p)] = readFileSync(p, "utf8");
  }
  return out;
}
async function run(port: MemoryPort) {
  const planner = offlinePlanner();
  for (let i = 0; i < 60; i++) {
    const r = await step(port, {}, { planner });
    if (r.next !== "continue") return r;
  }
}
const [fixture, task, ...feedbacks] = process.argv.slice(2);
const files = walk(fixture!);
const port = new MemoryPort({ files, facts: { planner: "offline", prompt: task! } });
await run(port);
console.log(port.readPlan()!.content);
for (const fb of feedbacks) {
  const [feedback, quote, text] = fb.split("|||");
  port.decide(port.pendingWait()!.tool_use_id, {
    kind: "reject",
    feedback: feedback ?? "",
    ...(quote !== undefined ? { comments: [{ quote, text: text ?? "" }] } : {}),
  } as never);
  await run(port);
  console.log("=".repeat(30), "after:", fb);
  console.log(port.readPlan()!.content);
}
