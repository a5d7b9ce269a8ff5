import { describe, expect, it } from "vitest";
import { TELEPORT_SENTINEL } from "../../src/protocol/index.ts";

describe("node project", () => {
  it("imports the shared protocol", () => {
    expect(TELEPORT_SENTINEL).toBe("__ULTRAPLAN_TELEPORT_LOCAL__");
  });
});
