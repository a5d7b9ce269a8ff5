import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import { resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import type { FeedPage } from "../../../src/protocol/index.ts";
import { runNodeScript } from "../../support/node-script.ts";
import { fakeSession } from "../fake-feed.ts";
import { ev, FeedLog } from "../feed-events.ts";

/**
 * The group wait's hang under load (docs/DESIGN.md "The client's requests"). `wrangler dev`
 * gzips every JSON answer and sends it chunked. Node 20's fetch
 * (undici 6) stops listening for its abort signal once the last byte has arrived, while the
 * gunzip behind the body stream is still at work; a signal aborting in that window (the group
 * stopping a sibling's poll because another plan was chosen) leaves the body's `reader.read()`
 * pending forever, with nothing keeping Node alive: the CLI exited with code 13 (unsettled
 * top-level await) right after the teleport.
 *
 * Here a real HTTP server plays a group of two: session B's next events page is a gzipped,
 * chunked answer whose body takes a while to inflate (a page padded with whitespace) and whose
 * last chunk comes a little after its first; session A's next page, sent right after B's last
 * chunk, teleports A's plan. The group then aborts B's poll while B's body is still inflating.
 * The poll runs in its own Node process (group-abort-child.ts) so that the symptom is the real
 * one: the process must print A's plan and exit 0, not end with code 13.
 */

const TOKEN = "group-abort-token";
const A = "ses_01jxabort0000000000000000a";
const B = "ses_01jxabort0000000000000000b";
const CHILD = resolve(import.meta.dirname, "group-abort-child.ts");
/** Inflated size of B's trap page: long enough to inflate that the abort lands while it does. */
const TRAP_INFLATED_BYTES = 24 * 1024 * 1024;
/** Between the first and the last chunk of B's trap page: the client has its headers by then. */
const LAST_CHUNK_DELAY_MS = 10;
/** Kills a child that outlives this; far above the seconds the fixed poll takes. */
const CHILD_KILL_MS = 90_000;

interface GroupServer {
  readonly url: string;
  /** What happened, in order: "trap-headers", "trap-end", "teleport-sent". */
  readonly steps: string[];
  close(): Promise<void>;
}

async function startGroupServer(): Promise<GroupServer> {
  const logs = new Map([
    [A, new FeedLog()],
    [B, new FeedLog()],
  ]);
  logs.get(A)?.append(ev.init(), ev.exitPlanMode("pa"));
  logs.get(B)?.append(ev.init(), ev.exitPlanMode("pb"));
  const steps: string[] = [];
  /** Each session's second events request, held until both have arrived. */
  const held = new Map<string, { res: ServerResponse; after: string | null }>();
  const served = new Map<string, number>();

  const answerEvents = (id: string, res: ServerResponse, after: string | null) => {
    const n = (served.get(id) ?? 0) + 1;
    served.set(id, n);
    if (n !== 2) {
      json(res, 200, logs.get(id)?.page(after, 100));
      return;
    }
    held.set(id, { res, after });
    const a = held.get(A);
    const b = held.get(B);
    if (a && b) springTrap(a, b);
  };

  const springTrap = (
    a: { res: ServerResponse; after: string | null },
    b: { res: ServerResponse; after: string | null },
  ) => {
    const page = logs.get(B)?.page(b.after, 100);
    const padded = JSON.stringify(page) + " ".repeat(TRAP_INFLATED_BYTES);
    b.res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
    b.res.write(gzipSync(padded));
    steps.push("trap-headers");
    setTimeout(() => {
      b.res.end(() => {
        steps.push("trap-end");
        logs.get(A)?.append(ev.teleport("pa", "plan of a"), ev.result("archived"));
        json(a.res, 200, logs.get(A)?.page(a.after, 100));
        steps.push("teleport-sent");
      });
    }, LAST_CHUNK_DELAY_MS);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      json(res, 401, { error: { code: "unauthorized", message: "unknown token" } });
      return;
    }
    const m = /^\/v1\/sessions\/([^/]+)(\/events)?$/.exec(url.pathname);
    const id = m?.[1] ?? "";
    if (!m || !logs.has(id)) {
      json(res, 404, { error: { code: "not_found", message: "no such session" } });
      return;
    }
    if (m[2]) answerEvents(id, res, url.searchParams.get("after_id"));
    else json(res, 200, fakeSession({ id, phase: "plan_ready", status: "requires_action" }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    steps,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

function json(res: ServerResponse, status: number, body: FeedPage | object | undefined): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

let groupServer: GroupServer | undefined;
afterEach(async () => {
  await groupServer?.close();
  groupServer = undefined;
});

describe("the group wait when a sibling's poll is stopped mid-answer", () => {
  it("settles every poll and answers the chosen plan (no exit 13) when the group aborts a sibling while its gzipped page is still inflating", async () => {
    groupServer = await startGroupServer();
    const { code, stdout, stderr } = await runNodeScript(
      CHILD,
      [groupServer.url, TOKEN, A, B],
      CHILD_KILL_MS,
    );
    // The scenario happened as staged: A's teleport went out only after B's last chunk.
    expect(groupServer.steps).toEqual(["trap-headers", "trap-end", "teleport-sent"]);
    expect(code, `exit ${code}; stderr: ${stderr}`).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ sessionId: A, kind: "teleport" });
  }, 120_000);
});
