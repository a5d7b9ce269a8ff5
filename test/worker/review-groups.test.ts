import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/protocol/index.ts";
import {
  ALICE,
  api,
  BOB,
  createDrivenSession,
  openPlan,
  PLAN_CALL,
} from "../support/worker/sessions.ts";
import { hostilePlan, XSS_PAYLOADS } from "./review-fixtures.ts";
import { expectInert, parseElements, textOf } from "./review-inspect.ts";

/**
 * The review page of a session in a best-of-N group, served by the real worker: it links the
 * group's other sessions (of the same owner and group only) and renders their plans side by
 * side at `?compare=1`, as inert as the page itself although titles and plans are hostile.
 */

function keyOf(session: Session): string {
  return new URL(session.review_url).searchParams.get("key") ?? "";
}

async function reviewPage(session: Session, extra = ""): Promise<{ res: Response; html: string }> {
  const res = await exports.default.fetch(
    new Request(
      `http://planport.test/review/${session.id}?key=${encodeURIComponent(keyOf(session))}${extra}`,
    ),
  );
  return { res, html: await res.text() };
}

function nonceOf(res: Response): string {
  const match = /style-src 'nonce-([^']+)'/.exec(res.headers.get("Content-Security-Policy") ?? "");
  if (!match) throw new Error("no style nonce in the CSP");
  return match[1]!;
}

/** The review links the page gives to sessions other than its own. */
async function siblingLinks(html: string): Promise<Map<string, string>> {
  const links = new Map<string, string>();
  for (const el of await parseElements(html)) {
    const id = el.attrs.get("data-sibling");
    if (el.tag === "a" && id) links.set(id, el.attrs.get("href") ?? "");
  }
  return links;
}

async function groupOfTwo(): Promise<{ a: Session; b: Session; group: string }> {
  const group = `rv-${crypto.randomUUID().slice(0, 8)}`;
  const a = await createDrivenSession(ALICE.token, { group, title: XSS_PAYLOADS[0] });
  const b = await createDrivenSession(ALICE.token, { group, title: XSS_PAYLOADS[1] });
  await openPlan(a.id, hostilePlan());
  await openPlan(b.id, `# Plan B\n\n${XSS_PAYLOADS.join("\n\n")}\n`);
  return { a, b, group };
}

describe("the review page of a session in a group", () => {
  it("links each sibling's review page and the comparison, and stays inert", async () => {
    const { a, b, group } = await groupOfTwo();
    // Same group name, another owner: another group, never shown.
    const stranger = await createDrivenSession(BOB.token, { group });
    const { res, html } = await reviewPage(a);
    expect(res.status).toBe(200);
    await expectInert(html, nonceOf(res));
    const links = await siblingLinks(html);
    expect([...links.keys()]).toEqual([b.id]);
    expect(links.get(b.id)).toBe(`/review/${b.id}?key=${encodeURIComponent(keyOf(b))}`);
    expect(html).not.toContain(stranger.id);
    expect(await textOf(html, '[data-region="group"] .hint')).toContain("2 of 2 plans ready");
    // The sibling link opens the sibling's page with its own key.
    const sibling = await exports.default.fetch(
      new Request(`http://planport.test${links.get(b.id)}`),
    );
    expect(sibling.status).toBe(200);
  });

  it("renders the group's plans side by side at compare=1, without a script", async () => {
    const { a, b } = await groupOfTwo();
    const { res, html } = await reviewPage(a, "&compare=1");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("script-src 'nonce-");
    const elements = await expectInert(html, nonceOf(res), { scripts: 0 });
    expect(elements.filter((e) => e.tag === "section")).toHaveLength(2);
    expect(html).toContain("Plan B");
    expect(html).toContain("Safe links");
    expect([...(await siblingLinks(html)).keys()]).toEqual([a.id, b.id]);
  });

  it("after a sibling is chosen, says this one was superseded and marks the chosen one", async () => {
    const { a, b } = await groupOfTwo();
    await api.events(ALICE, b.id);
    await api.decide(ALICE, b.id, { tool_use_id: PLAN_CALL, decision: "teleport" });
    const { html } = await reviewPage(a);
    expect(await textOf(html, "#outcome-heading")).toContain("Superseded");
    expect(await textOf(html, ".verdict-chosen")).toBe("chosen");
  });

  it("a session in no group shows no group panel, and its comparison says there is none", async () => {
    const alone = await createDrivenSession(ALICE.token);
    const { html } = await reviewPage(alone);
    expect(html).toContain('<section data-region="group" hidden></section>');
    const compare = await reviewPage(alone, "&compare=1");
    expect(compare.res.status).toBe(200);
    expect(compare.html).toContain("not part of a group");
  });
});
