import { describe, expect, it } from "vitest";
import {
  GATHER_MAX_BYTES,
  gatheringPlan,
  MAX_SCATTERED_PACKS,
} from "../../src/owner/pack-store.ts";

/**
 * The rule a commit follows to gather a tree's scattered blobs into one pack (pack-store.ts;
 * docs/DESIGN.md "Incremental snapshots"). test/worker/snapshot-long-run.test.ts runs it against
 * R2 and the owner index.
 */

describe("which blobs a commit gathers (pure)", () => {
  const KiB = 1024;
  const MiB = 1024 * KiB;
  /** A tree of `blobs` blobs in `pack` of `size` each, ids `<pack>-<i>`. */
  function tree(parts: [pack: string, blobs: number, size: number][]) {
    const found = new Map<string, { pack: string; offset: number; size: number }>();
    const order: string[] = [];
    for (const [pack, count, size] of parts) {
      for (let i = 0; i < count; i++) {
        found.set(`${pack}-${i}`, { pack, offset: i * size, size });
        order.push(`${pack}-${i}`);
      }
    }
    return { found, order };
  }

  it("leaves a tree alone while it reads few scattered packs", () => {
    const parts: [string, number, number][] = [["base", 100, 80 * KiB]];
    for (let p = 0; p < MAX_SCATTERED_PACKS - 1; p++) parts.push([`small${p}`, 2, 2 * KiB]);
    const { found, order } = tree(parts);
    const movable = new Map(parts.map(([pack, n, size]) => [pack, n * size]));
    expect(gatheringPlan(found, order, movable)).toEqual([]);
  });

  it("gathers the small packs, in the tree's order, and leaves a well-used large pack", () => {
    const parts: [string, number, number][] = [["base", 100, 80 * KiB]];
    for (let p = 0; p < MAX_SCATTERED_PACKS + 2; p++) parts.push([`small${p}`, 2, 2 * KiB]);
    const { found, order } = tree(parts);
    const movable = new Map(parts.map(([pack, n, size]) => [pack, n * size]));
    const plan = gatheringPlan(found, order, movable);
    expect(plan.map((g) => g.id)).toEqual(order.filter((id) => id.startsWith("small")));
  });

  it("gathers a large pack the tree reads less than half of, never a pack it may not move", () => {
    const { found, order } = tree([
      ["sparse", 10, 300 * KiB],
      ["old", 2, 2 * KiB],
      ...Array.from(
        { length: MAX_SCATTERED_PACKS },
        (_, p) => [`small${p}`, 1, 2 * KiB] as [string, number, number],
      ),
    ]);
    const movable = new Map<string, number>([["sparse", 8 * MiB]]);
    for (let p = 0; p < MAX_SCATTERED_PACKS; p++) movable.set(`small${p}`, 2 * KiB);
    const plan = gatheringPlan(found, order, movable);
    const packs = new Set(plan.map((g) => g.from.pack));
    expect(packs.has("sparse")).toBe(true);
    expect(packs.has("old")).toBe(false);
  });

  it("copies at most one pack's worth, the least read packs first", () => {
    const parts: [string, number, number][] = [];
    for (let p = 0; p < 6; p++) parts.push([`mid${p}`, 10, 300 * KiB]); // 3 MiB read from each
    parts.push(["tiny", 1, KiB]);
    const { found, order } = tree(parts);
    const movable = new Map(parts.map(([pack, n, size]) => [pack, n * size]));
    const plan = gatheringPlan(found, order, movable);
    const copied = plan.reduce((sum, g) => sum + g.from.size, 0);
    expect(copied).toBeLessThanOrEqual(GATHER_MAX_BYTES);
    expect(plan.some((g) => g.from.pack === "tiny")).toBe(true);
  });
});
