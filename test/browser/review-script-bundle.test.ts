import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { REVIEW_SCRIPT_MODULE, reviewScriptModule } from "../../scripts/build-review-script.ts";

/**
 * The review page's browser script is written as TypeScript (src/review/browser/) and reaches
 * the worker as a committed, generated module; this keeps the two from drifting apart.
 */
describe("the bundled review script", () => {
  it("is what `npm run build:review` makes from src/review/browser (run it after a change there)", async () => {
    const committed = await readFile(REVIEW_SCRIPT_MODULE, "utf8");
    expect(committed === (await reviewScriptModule()), "run `npm run build:review`").toBe(true);
  });

  it("can sit inside a <script> element: no closing tag, no comment opener, ASCII only", async () => {
    const { REVIEW_SCRIPT } = await import("../../src/review/script/index.ts");
    expect(REVIEW_SCRIPT).not.toMatch(/<\/script|<!--/i);
    expect(REVIEW_SCRIPT).toMatch(/^[\x20-\x7e\n]*$/);
  });
});
