import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createReporter } from "../../../local-client/cli/reporter.ts";
import {
  NOTIFICATION_MAX_CHARS,
  notificationBytes,
  notificationProtocol,
  notificationText,
} from "../../../local-client/terminal/notify.ts";

/** The bell and desktop notifications of the `plan`/`attach` spinner. */

describe("notificationProtocol", () => {
  it.each([
    [{ TERM_PROGRAM: "iTerm.app", TERM: "xterm-256color" }, "osc9"],
    [{ WT_SESSION: "0b7d…", TERM: "xterm-256color" }, "osc9"],
    [{ ConEmuPID: "1234" }, "osc9"],
    [{ TERM_PROGRAM: "ghostty", TERM: "xterm-ghostty" }, "osc9"],
    [{ TERM: "xterm-kitty" }, "osc9"],
    [{ KITTY_WINDOW_ID: "1", TERM: "xterm-256color" }, "osc9"],
    [{ TERM_PROGRAM: "WezTerm", TERM: "xterm-256color" }, "osc777"],
    [{ TERM: "foot" }, "osc777"],
    [{ TERM: "foot-extra" }, "osc777"],
    [{ TERM: "rxvt-unicode-256color" }, "osc777"],
    [{ TERM: "xterm-256color" }, "bell"],
    [{ TERM_PROGRAM: "Apple_Terminal", TERM: "xterm-256color" }, "bell"],
    [{}, "bell"],
  ] as const)("%o → %s", (env, protocol) => {
    expect(notificationProtocol(env)).toBe(protocol);
  });

  it("inside tmux or screen only the bell is sent, whatever terminal is outside", () => {
    expect(notificationProtocol({ TERM_PROGRAM: "iTerm.app", TMUX: "/tmp/tmux-1/default" })).toBe(
      "bell",
    );
    expect(notificationProtocol({ TERM: "screen-256color", WT_SESSION: "x" })).toBe("bell");
    expect(notificationProtocol({ TERM: "tmux-256color", TERM_PROGRAM: "WezTerm" })).toBe("bell");
    expect(notificationProtocol({ STY: "123.pts-0", TERM: "foot" })).toBe("bell");
    expect(notificationProtocol({ TERM_PROGRAM: "tmux", KITTY_WINDOW_ID: "1" })).toBe("bell");
  });
});

describe("notificationBytes", () => {
  it("OSC 9: the bell, then ESC ] 9 ; text BEL", () => {
    expect(notificationBytes("osc9", "planport", "plan ready")).toBe(
      "\x07\x1b]9;planport: plan ready\x07",
    );
  });

  it("OSC 777: the bell, then ESC ] 777 ; notify ; title ; body BEL", () => {
    expect(notificationBytes("osc777", "planport", "plan ready")).toBe(
      "\x07\x1b]777;notify;planport;plan ready\x07",
    );
  });

  it("a terminal without notifications gets the bell alone", () => {
    expect(notificationBytes("bell", "planport", "plan ready")).toBe("\x07");
  });

  it("a body from the server cannot end the sequence or start another", () => {
    const hostile = "x\x07\x1b]0;pwned\x07\x1b[2J\u009d8;;http://evil\u009c y\nz";
    for (const protocol of ["osc9", "osc777"] as const) {
      const bytes = notificationBytes(protocol, "planport", hostile);
      // Exactly two BELs (the bell and the terminator) and one ESC (the introducer).
      expect(bytes.split("\x07")).toHaveLength(3);
      expect(bytes.split("\x1b")).toHaveLength(2);
      expect(bytes.endsWith("\x07")).toBe(true);
      const payload = bytes.slice(3, -1);
      expect(payload).not.toMatch(/[\p{Cc}\p{Cf}]/u);
      expect(payload).toContain("x y z");
    }
  });

  it("the OSC 777 title cannot add a field", () => {
    expect(notificationBytes("osc777", "a;b", "c;d")).toBe("\x07\x1b]777;notify;a,b;c;d\x07");
  });

  it("a long body is cut short", () => {
    const bytes = notificationBytes("osc9", "planport", "y".repeat(5_000));
    expect(bytes.length).toBeLessThanOrEqual(NOTIFICATION_MAX_CHARS + 20);
    expect(bytes).toContain("…");
  });
});

describe("notificationText", () => {
  it("says what happened and about what", () => {
    expect(notificationText("plan_ready", "session ses_a")).toBe(
      "plan ready for review: session ses_a",
    );
    expect(notificationText("needs_input", "group g1")).toBe(
      "a session needs your input: group g1",
    );
    expect(notificationText("plan_ready", "\x1b[2J")).toBe("plan ready for review");
  });
});

/** A reporter on a fake terminal: what it writes to stderr. */
function reporterOn(
  opts: { json: boolean; quiet?: boolean },
  tty: boolean,
  env: NodeJS.ProcessEnv,
) {
  const stderr = Object.assign(new PassThrough(), { isTTY: tty, columns: 80 });
  const stdout = new PassThrough();
  let err = "";
  let out = "";
  stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const reporter = createReporter(opts, { stdout, stderr }, env);
  return { reporter, err: () => err, out: () => out };
}

describe("the plan/attach reporter's notifications", () => {
  const iterm = { TERM_PROGRAM: "iTerm.app" };

  it("on a TTY, a ready plan and a question each ring and notify; researching does not", () => {
    const r = reporterOn({ json: false }, true, iterm);
    r.reporter.session("ses_a", "http://h/review/ses_a?key=k");
    r.reporter.phase("running", "http://h/review/ses_a?key=k");
    expect(r.err()).not.toContain("\x07");
    r.reporter.phase("plan_ready", "http://h/review/ses_a?key=k");
    expect(r.err()).toContain("\x07\x1b]9;planport: plan ready for review: session ses_a\x07");
    r.reporter.phase("needs_input", "http://h/review/ses_a?key=k");
    expect(r.err()).toContain("\x1b]9;planport: a session needs your input: session ses_a\x07");
    r.reporter.pause();
  });

  it("on a TTY, the wait shows again once the server answers after a failure, with no line twice", () => {
    const r = reporterOn({ json: false, quiet: true }, true, {});
    const url = "http://h/review/ses_a?key=k";
    r.reporter.session("ses_a", url);
    r.reporter.phase("plan_ready", url);
    r.reporter.status("cannot reach the server (1 in a row): timed out");
    r.reporter.recovered();
    const drawn = r.err().split("\r\x1b[2K").at(-1) ?? "";
    r.reporter.pause();
    expect(drawn).toMatch(/^\S waiting for your decision…$/);
    expect(r.err().split("plan ready — review at").length - 1).toBe(1);
  });

  it("--quiet sends neither the bell nor a notification", () => {
    const r = reporterOn({ json: false, quiet: true }, true, iterm);
    r.reporter.session("ses_a", "http://h/r");
    r.reporter.phase("plan_ready", "http://h/r");
    r.reporter.pause();
    expect(r.err()).toContain("plan ready");
    expect(r.err()).not.toContain("\x07");
    expect(r.err()).not.toContain("\x1b]");
  });

  it("without a TTY (logs, CI) nothing is rung", () => {
    const r = reporterOn({ json: false }, false, iterm);
    r.reporter.phase("plan_ready", "http://h/r");
    expect(r.err()).toContain("plan ready");
    expect(r.err()).not.toContain("\x07");
  });

  it("with CI set, a TTY is not treated as one", () => {
    const r = reporterOn({ json: false }, true, { ...iterm, CI: "true" });
    r.reporter.phase("plan_ready", "http://h/r");
    expect(r.err()).not.toContain("\x07");
  });

  it("--json never rings, on stdout or stderr", () => {
    const r = reporterOn({ json: true }, true, iterm);
    r.reporter.phase("plan_ready", "http://h/r");
    expect(r.out()).toBe('{"event":"phase","phase":"plan_ready"}\n');
    expect(r.err()).toBe("");
  });

  it("a hostile session id cannot break out of the notification", () => {
    const r = reporterOn({ json: false }, true, { TERM: "foot" });
    r.reporter.session("ses_\x07\x1b]0;x\x07a", "http://h/r");
    r.reporter.phase("plan_ready", "http://h/r");
    r.reporter.pause();
    const osc = r.err().slice(r.err().indexOf("\x1b]777"));
    expect(
      osc.startsWith("\x1b]777;notify;planport;plan ready for review: session ses_a\x07"),
    ).toBe(true);
  });
});
