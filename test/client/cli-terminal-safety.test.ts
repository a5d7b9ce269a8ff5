import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  fakeSession,
  startFakeFeed,
} from "./fake-feed.ts";
import { ev } from "./feed-events.ts";
import { errorAnswer, type HostileServer, startHostileServer } from "./hostile-server.ts";
import { isolatedHome, ndjson, runCli } from "./run-cli.ts";

/**
 * A spoofing server against the real CLI process (issue 10, finding 5): a session title, a
 * review link, a server error message and a session's final message that carry terminal escape
 * sequences (window title, screen clear, hyperlinks) and bidi overrides. Nothing the CLI writes,
 * on stdout or stderr, may contain ESC, BEL, another control character but newline, or a bidi or
 * invisible format character (a bidi override shows as its mark, `⟨U+202E⟩`); `--json` output
 * still parses to exactly what the server sent.
 */

const ESC = "\x1b";
const BEL = "\x07";
const TITLE = `${ESC}]0;owned${BEL}Fix ${ESC}[2Jlogin\u202e${ESC}]8;;https://evil.example${ESC}\\ for real${ESC}]8;;${ESC}\\ ${"x".repeat(60)}\nsecond line`;
const REVIEW_URL = `http://127.0.0.1/review/${FAKE_SESSION_ID}?key=k${ESC}]8;;http://evil${BEL}\u2066`;
const SERVER_MESSAGE = `no access${ESC}]0;pwned${BEL}${ESC}[2J \u202eretteb\u202c`;
const FINAL_MESSAGE = `the model said ${ESC}[31mdone${ESC}[0m\u009b2J\u2067`;

/** What a terminal could act on, or that hides or reorders text. */
const UNSAFE = /(?!\n)\p{Cc}|\p{Cf}/u;

let feed: FakeFeed;
let home: ReturnType<typeof isolatedHome>;
beforeEach(async () => {
  feed = await startFakeFeed();
  feed.session = fakeSession({ title: TITLE, review_url: REVIEW_URL });
  home = isolatedHome();
});
afterEach(() => feed.close());

const flags = (server = feed.url) => ["--server", server, "--token", FAKE_TOKEN];

function expectSafe(output: string, what: string) {
  const at = output.search(UNSAFE);
  expect(at, `${what} wrote ${JSON.stringify(output.slice(Math.max(0, at - 20), at + 20))}`).toBe(
    -1,
  );
}

describe("text from the server never reaches the terminal raw", { timeout: 60_000 }, () => {
  it("list: one row per session, the title cut after cleaning, no escape or bidi bytes", async () => {
    const { code, stdout, stderr } = await runCli(["list", ...flags()], { env: home.env });
    expect(code, stderr).toBe(0);
    expectSafe(stdout, "list (stdout)");
    expectSafe(stderr, "list (stderr)");
    const lines = stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain("Fix login⟨U+202E⟩ for real xxx");
    expect(lines[1]).toContain(`review/${FAKE_SESSION_ID}?key=k`);
  });

  it("status: every field on its own line, cleaned", async () => {
    const { code, stdout } = await runCli(["status", FAKE_SESSION_ID, ...flags()], {
      env: home.env,
    });
    expect(code).toBe(0);
    expectSafe(stdout, "status");
    expect(stdout).toMatch(/^title +Fix login⟨U\+202E⟩ for real x+ second line$/m);
  });

  it("list --json and status --json stay exact JSON, with the unsafe characters escaped", async () => {
    const list = await runCli(["list", "--json", ...flags()], { env: home.env });
    expectSafe(list.stdout.trimEnd(), "list --json");
    expect(JSON.parse(list.stdout)).toEqual({ data: [feed.session], has_more: false });
    const status = await runCli(["status", FAKE_SESSION_ID, "--json", ...flags()], {
      env: home.env,
    });
    expectSafe(status.stdout.trimEnd(), "status --json");
    expect(JSON.parse(status.stdout)).toEqual(feed.session);
  });

  it("attach: the review link and the session's final message are cleaned; --json keeps them exact", async () => {
    feed.log.append(ev.init(), ev.text(), ev.result("error_during_execution", FINAL_MESSAGE));
    const plain = await runCli(["attach", FAKE_SESSION_ID, ...flags()], { env: home.env });
    expect(plain.code).toBe(3);
    expectSafe(plain.stderr, "attach (stderr)");
    expect(plain.stdout).toBe("");
    expect(plain.stderr).toContain(`review: http://127.0.0.1/review/${FAKE_SESSION_ID}?key=k`);
    expect(plain.stderr).toContain("the model said done");

    const json = await runCli(["attach", FAKE_SESSION_ID, "--json", ...flags()], {
      env: home.env,
    });
    expect(json.code).toBe(3);
    expectSafe(json.stdout.replace(/\n/g, ""), "attach --json");
    const lines = ndjson(json.stdout);
    expect(lines[0]).toEqual({ event: "session", id: FAKE_SESSION_ID, review_url: REVIEW_URL });
    expect(String(lines.at(-1)?.message)).toContain(FINAL_MESSAGE);
  });

  describe("a server's error message", () => {
    let spoof: HostileServer;
    beforeEach(async () => {
      spoof = await startHostileServer(feed.url, (_req, res) =>
        errorAnswer(res, 403, "forbidden", SERVER_MESSAGE),
      );
    });
    afterEach(() => spoof.close());

    it("is cleaned on stderr by status, list, stop and pull", async () => {
      for (const args of [
        ["status", FAKE_SESSION_ID],
        ["list"],
        ["stop", FAKE_SESSION_ID],
        ["pull", FAKE_SESSION_ID],
      ]) {
        const { code, stdout, stderr } = await runCli([...args, ...flags(spoof.url)], {
          env: home.env,
        });
        expect(code, args.join(" ")).toBe(6);
        expectSafe(stderr, `${args[0]} (stderr)`);
        expectSafe(stdout, `${args[0]} (stdout)`);
        expect(stderr).toContain("no access");
      }
    });

    it("is cleaned by attach, and exact in its --json error line", async () => {
      const plain = await runCli(["attach", FAKE_SESSION_ID, ...flags(spoof.url)], {
        env: home.env,
      });
      expect(plain.code).toBe(6);
      expectSafe(plain.stderr, "attach (stderr)");
      expect(plain.stderr).toContain("no access");
      const json = await runCli(["attach", FAKE_SESSION_ID, "--json", ...flags(spoof.url)], {
        env: home.env,
      });
      expectSafe(json.stdout.replace(/\n/g, ""), "attach --json");
      expect(String(ndjson(json.stdout).at(-1)?.message)).toContain(SERVER_MESSAGE);
    });
  });
});
