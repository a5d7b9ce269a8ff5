import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";
import { isolatedHome, startCli } from "../client/run-cli.ts";
import { eventually } from "../support/eventually.ts";

/**
 * The README's Quick start is true: its second command, run exactly as written in this clone
 * (`npm start -- "<task>"`, with a home of its own), prints the lines of the sample the README
 * shows, in that order — ids, ports, paths and counts aside. (`npm ci`, the first command, is
 * what CI itself runs on a clean clone.)
 */

const README = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");

/** The fenced blocks of the Quick start section, in order. */
function quickStartBlocks(): string[] {
  const start = README.indexOf("\n## Quick start\n");
  const end = README.indexOf("\n## ", start + 5);
  const section = README.slice(start, end);
  return [...section.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/**
 * A sample line as a pattern: a session id, a review key cut with "…", the example path and
 * numbers stand for any; everything else (the words, the "…" of "researching…") is literal.
 */
function sampleShape(line: string): RegExp {
  const parts = line.split(
    /(ses_[0-9a-z]*…?|key=\S*…|\/work\/planport|\d[\d,.]* (?:B|KiB|MiB|GiB)\b|\d[\d,.]*)/,
  );
  const source = parts
    .map((part, i) => {
      if (i % 2 === 0) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (part.startsWith("ses_")) return "ses_[0-9a-z]+";
      if (part.startsWith("key=")) return "key=\\S+";
      if (part === "/work/planport") return ".+";
      if (/ (B|KiB|MiB|GiB)$/.test(part)) return "[\\d,.]+ (?:B|KiB|MiB|GiB)";
      return "[\\d,.]+";
    })
    .join("");
  return new RegExp(`^${source}$`);
}

describe("the README's Quick start", () => {
  it("shapes the sample the way the command prints it", () => {
    expect(sampleShape("session ses_01m8mnt2087n3r8xxby6dm8h77").test("session ses_0abc12")).toBe(
      true,
    );
    expect(
      sampleShape("review: http://127.0.0.1:39783/review/ses_01m8…?key=nuD0…").test(
        "review: http://127.0.0.1:41234/review/ses_01abcdef?key=XyZ-_9",
      ),
    ).toBe(true);
    expect(sampleShape("researching…").test("plan ready")).toBe(false);
    expect(sampleShape("researching…").test("researching…")).toBe(true);
    expect(sampleShape("sent 531 files (999.7 KiB)").test("sent 682 files (1.2 MiB)")).toBe(true);
  });

  it("prints the sample's lines, in order, when its command runs in this clone", async () => {
    const [commands, sample] = quickStartBlocks();
    expect(commands).toMatch(/^npm ci$/m);
    const start = /^npm start -- "([^"]+)"$/m.exec(commands!);
    expect(start, "the Quick start runs npm start with a task").not.toBeNull();
    const expected = sample!.trim().split("\n");
    expect(expected.length).toBeGreaterThan(3);

    const home = isolatedHome();
    const child = spawn("npm", ["start", "--", start![1]!], {
      cwd: PACKAGE_ROOT,
      env: home.env,
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: Ctrl-C reaches npm and the planport it started, as in a terminal.
      detached: true,
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    const exited = once(child, "exit");
    try {
      await eventually(() => /plan ready — review at/.test(output), { interval: 200 });
      const lines = output.split("\n").map((l) => l.trimEnd());
      // Every sample line is printed, in the sample's order (npm's own lines may come between).
      let at = 0;
      for (const want of expected) {
        const shape = sampleShape(want);
        const found = lines.findIndex((l, i) => i >= at && shape.test(l));
        expect(found, `"${want}" after line ${at} of:\n${output}`).toBeGreaterThanOrEqual(0);
        at = found + 1;
      }
      expect(lines.filter((l) => l.startsWith("plan ready — review at"))).toHaveLength(1);
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGINT");
      await exited;
      await startCli(["embedded", "--stop"], { env: home.env }).done;
    }
  }, 300_000);
});
