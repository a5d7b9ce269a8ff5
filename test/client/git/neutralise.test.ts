import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  type ConfigEntry,
  configKeyParts,
  parseConfigListing,
} from "../../../local-client/git/config-listing.ts";
import {
  ALWAYS_SET,
  BUILTIN_TEXT_MERGE,
  coverageOf,
  mayNameCommand,
  neutralisingOverrides,
} from "../../../local-client/git/neutralise.ts";

/** The pure core of the git runner: from the configuration git would read to the overrides. */

const local = (key: string, value: string | null = "x"): ConfigEntry => ({
  scope: "local",
  origin: "file:.git/config",
  key,
  value,
});

describe("reading git's configuration listing", () => {
  it("splits scope, origin, key and value, and keeps a key written without a value", () => {
    const output =
      "global\0file:/home/me/.gitconfig\0user.name\nMe\0" +
      "local\0file:.git/config\0x.flag\0" +
      "local\0file:.git/extra.config\0filter.a.b=c d.clean\nrun it\nnow\0";
    expect(parseConfigListing(output)).toEqual([
      { scope: "global", origin: "file:/home/me/.gitconfig", key: "user.name", value: "Me" },
      { scope: "local", origin: "file:.git/config", key: "x.flag", value: null },
      {
        scope: "local",
        origin: "file:.git/extra.config",
        key: "filter.a.b=c d.clean",
        value: "run it\nnow",
      },
    ]);
  });

  it("finds the subsection between the first and the last dot", () => {
    expect(configKeyParts("merge.ours.theirs.driver")).toEqual({
      section: "merge",
      subsection: "ours.theirs",
      name: "driver",
    });
    expect(configKeyParts("core.fsmonitor")).toEqual({
      section: "core",
      subsection: null,
      name: "fsmonitor",
    });
  });
});

describe("the overrides for a run", () => {
  it("always switch off fsmonitor, hooks, pager, editors, prompts, helpers and transports", () => {
    const decided = neutralisingOverrides([]);
    expect(decided).toEqual({ ok: true, value: ALWAYS_SET });
    expect(ALWAYS_SET).toEqual(
      expect.arrayContaining([
        { key: "core.fsmonitor", value: "false" },
        { key: "core.hooksPath", value: "/dev/null" },
        { key: "credential.helper", value: "" },
        { key: "protocol.allow", value: "never" },
      ]),
    );
  });

  it("empty every filter the repository defines, and replace its merge drivers with git's own merge", () => {
    const decided = neutralisingOverrides([
      local("filter.Crypt.clean"),
      local("filter.Crypt.smudge"),
      local("merge.ours.theirs.driver"),
      local("hook.lint.command"),
    ]);
    expect(decided.ok && decided.value.slice(ALWAYS_SET.length)).toEqual([
      { key: "filter.Crypt.clean", value: "" },
      { key: "filter.Crypt.smudge", value: "" },
      { key: "filter.Crypt.process", value: "" },
      { key: "filter.Crypt.required", value: "false" },
      { key: "merge.ours.theirs.driver", value: BUILTIN_TEXT_MERGE },
      { key: "hook.lint.enabled", value: "false" },
    ]);
  });

  it("leave the user's own drivers alone, and count a scope git may add later as the repository's", () => {
    const user = { ...local("filter.lfs.clean"), scope: "global" };
    const future = { ...local("filter.new.clean"), scope: "repository-v2" };
    const decided = neutralisingOverrides([user, future]);
    expect(decided.ok && decided.value.slice(ALWAYS_SET.length).map((o) => o.key)).toEqual([
      "filter.new.clean",
      "filter.new.smudge",
      "filter.new.process",
      "filter.new.required",
    ]);
  });

  it("refuse a key of git's own that may name a command and that no rule covers", () => {
    expect(neutralisingOverrides([local("core.frobnicateCommand"), local("lfs.hooks")])).toEqual({
      ok: false,
      error: [{ key: "core.frobnicateCommand", origin: "file:.git/config" }],
    });
    // Other tools' sections are never read by git itself.
    expect(mayNameCommand("gitflow.path.hooks")).toBe(false);
  });

  it("cover every key the installed git documents whose name may be a command", () => {
    const documented = execFileSync("git", ["help", "--config"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => /^[A-Za-z][\w.<>*-]*\.[\w<>*-]+$/.test(line))
      .map((line) => line.replace(/<[^>]+>|\*/g, "x"));
    expect(documented.length).toBeGreaterThan(300);
    const uncovered = documented.filter((key) => mayNameCommand(key) && coverageOf(key) === null);
    expect(uncovered).toEqual([]);
  });
});
