import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Api } from "../../../local-client/http/api.ts";
import { buildSnapshot } from "../../../local-client/snapshot/build.ts";
import { generatedRepository } from "../../worker/planner/generated-repo.ts";
import { planOnce } from "./plan-session.ts";
import type { ScaleResult } from "./report.ts";

/**
 * Plan time against repository size: the deterministic generated repository that the other
 * offline-planner benchmark uses (test/worker/planner/generated-repo.ts), at ~1,000 and
 * ~20,000 files (the snapshot limit), planned a few times each in the same worker.
 */

/** The task the generated repository has a known answer for (packages/auth). */
export const SCALE_TASK = "Add GitHub OAuth login that reuses the existing session";
/** 20,000 is the most files a snapshot may hold (SNAPSHOT_MAX_FILES). */
export const SCALE_SIZES = [1_000, 20_000] as const;
const SCALE_RUNS = 3;

/**
 * Measures each size and returns one row per size; a failed run is recorded in `outcome`.
 *
 * @example
 * const rows = await measureScale(api, 120_000, (line) => console.error(line));
 */
export async function measureScale(
  api: Api,
  timeoutMs: number,
  log: (line: string) => void,
  sizes: readonly number[] = SCALE_SIZES,
): Promise<ScaleResult[]> {
  const rows: ScaleResult[] = [];
  for (const files of sizes) {
    const root = mkdtempSync(join(tmpdir(), "planport-bench-scale-"));
    try {
      for (const [path, content] of Object.entries(generatedRepository(files))) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), content);
      }
      const snapshot = await buildSnapshot(root);
      if (!(await api.snapshotExists(snapshot.id))) await api.uploadSnapshot(snapshot.bytes);
      const row: ScaleResult = {
        label: `generated ${files.toLocaleString("en-US")}-file repository`,
        files: snapshot.files,
        runs: 0,
        outcome: "",
        server_ms: [],
        client_ms: [],
      };
      const outcomes = new Set<string>();
      for (let run = 0; run < SCALE_RUNS; run++) {
        const outcome = await planOnce(api, snapshot.id, SCALE_TASK, timeoutMs);
        row.runs += 1;
        row.client_ms.push(outcome.clientMs);
        if (outcome.kind === "failure") outcomes.add(`failure: ${outcome.reason}`);
        else {
          outcomes.add(outcome.kind);
          row.server_ms.push(outcome.serverMs);
        }
        log(
          `scale ${files} files, run ${run + 1}: ${outcome.kind} in ${Math.round(outcome.kind === "failure" ? outcome.clientMs : outcome.serverMs)} ms`,
        );
      }
      row.outcome = [...outcomes].join("; ");
      rows.push(row);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return rows;
}
