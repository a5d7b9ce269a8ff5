import { describe, expect, it } from "vitest";
import { byPath, changeContent, parseRawDiff } from "../../../container/runner/changes.ts";
import { cutOutput, OutputHead } from "../../../container/runner/output.ts";
import { tarMemberProblem, workspacePathProblem } from "../../../container/runner/paths.ts";
import { routeOf } from "../../../container/runner/server.ts";
import { StreamDemuxer } from "../../../local-client/execution/docker-stream.ts";
import { dockerUnavailable, imageHealth } from "../../../local-client/execution/health.ts";
import { IMAGE_DIGEST_LABEL } from "../../../local-client/execution/image.ts";
import { execSettings } from "../../../local-client/execution/settings.ts";
import { singleFileTar } from "../../../local-client/execution/tar.ts";

/** The pure parts of the runner and the local executor. */

describe("output cutting", () => {
  it("keeps a short stream whole", () => {
    const head = new OutputHead(100);
    head.push(Buffer.from("a\n"));
    head.push(Buffer.from("b"));
    expect(head.output()).toEqual({ text: "a\nb", bytes: 3, cut: false });
  });

  it("keeps only the head of a long stream, counts all of it, and cuts at a near line end", () => {
    const head = new OutputHead(50);
    for (let i = 0; i < 1000; i++) head.push(Buffer.from(`line ${String(i).padStart(4, "0")}\n`));
    const out = head.output();
    expect(out.bytes).toBe(10_000);
    expect(out.cut).toBe(true);
    expect(out.text).toBe("line 0000\nline 0001\nline 0002\nline 0003\nline 0004\n");
  });

  it("never splits a character when no line end is near", () => {
    const text = "é".repeat(5000); // two bytes each
    const out = cutOutput(Buffer.from(text).subarray(0, 3001), 10_000, 3001);
    expect(out.cut).toBe(true);
    expect(out.text).toBe("é".repeat(1500));
  });
});

describe("path safety", () => {
  it.each([
    ["/etc/passwd", "is absolute"],
    ["../x", "has a .. part"],
    ["a/../../x", "has a .. part"],
    [".git/config", "is inside .git"],
    ["sub/.GIT/hooks/x", "is inside .git"],
    ["a//b", "has an empty or . part"],
    ["", "is empty"],
  ])("refuses %j", (path, problem) => {
    expect(workspacePathProblem(path)).toBe(problem);
  });

  it("accepts ordinary paths, dotfiles and a .gitignore", () => {
    for (const path of ["src/a.ts", ".gitignore", ".github/workflows/ci.yml", "a..b"]) {
      expect(workspacePathProblem(path)).toBeUndefined();
    }
  });

  it("refuses absolute and climbing tar members, and accepts ./-prefixed ones", () => {
    expect(tarMemberProblem("./")).toBeUndefined();
    expect(tarMemberProblem("./src/a.ts")).toBeUndefined();
    expect(tarMemberProblem("/etc/x")).toBe("is absolute");
    expect(tarMemberProblem("./a/../../x")).toBe("has a .. part");
  });
});

describe("git's raw diff", () => {
  const z = "0".repeat(40);
  const a = "a".repeat(40);
  const b = "b".repeat(40);
  it("parses created, modified, type-changed and deleted paths, with odd names", () => {
    const text =
      `:000000 100644 ${z} ${a} A\0new file.txt\0` +
      `:100644 100755 ${a} ${b} M\0bin/run\0` +
      `:100644 120000 ${a} ${b} T\0link\0` +
      `:100644 000000 ${a} ${z} D\0dir/with\nnewline\0`;
    expect(parseRawDiff(text)).toEqual([
      { path: "new file.txt", kind: "created", mode: "100644" },
      { path: "bin/run", kind: "modified", mode: "100755" },
      { path: "link", kind: "modified", mode: "120000" },
      { path: "dir/with\nnewline", kind: "deleted", mode: "000000" },
    ]);
    expect(parseRawDiff("")).toEqual([]);
  });

  it("refuses output it does not understand", () => {
    expect(() => parseRawDiff("garbage\0x\0")).toThrow(/unexpected/);
  });

  it("carries text, and skips binaries and files over the limit", () => {
    expect(changeContent(Buffer.from("héllo\n"))).toEqual({ content: "héllo\n" });
    expect(changeContent(Buffer.from([104, 0, 105]))).toEqual({ skipped: "binary" });
    expect(changeContent(Buffer.from([0xff, 0xfe, 0x41]))).toEqual({ skipped: "binary" });
    expect(changeContent(Buffer.from("12345"), 4)).toEqual({ skipped: "too_large" });
    expect([{ path: "b" }, { path: "B" }, { path: "a/b" }].sort(byPath)).toEqual([
      { path: "B" },
      { path: "a/b" },
      { path: "b" },
    ]);
  });
});

describe("Docker's multiplexed exec stream", () => {
  const frame = (kind: number, text: string) => {
    const payload = Buffer.from(text);
    const header = Buffer.alloc(8);
    header[0] = kind;
    header.writeUInt32BE(payload.length, 4);
    return Buffer.concat([header, payload]);
  };

  it("splits stdout from stderr whatever the chunking", () => {
    const whole = Buffer.concat([frame(1, "out-1 "), frame(2, "err"), frame(1, "out-2")]);
    for (const step of [1, 3, 8, 9, whole.length]) {
      const demux = new StreamDemuxer(1000);
      for (let i = 0; i < whole.length; i += step) demux.push(whole.subarray(i, i + step));
      expect(demux.stdout().toString()).toBe("out-1 out-2");
      expect(demux.stderr().toString()).toBe("err");
      expect(demux.incomplete).toBe(false);
    }
  });

  it("notices a half-received frame and refuses more than its limit", () => {
    const demux = new StreamDemuxer(1000);
    demux.push(frame(1, "abcdef").subarray(0, 10));
    expect(demux.incomplete).toBe(true);
    expect(() => new StreamDemuxer(3).push(frame(1, "abcd"))).toThrow(/more than 3 bytes/);
  });
});

describe("the one-file tar", () => {
  it("is a ustar archive of 512-byte blocks that the host's tar reads", async () => {
    const { spawnSync } = await import("node:child_process");
    const tar = singleFileTar("request.json", Buffer.from('{"a":1}'));
    expect(tar.length % 512).toBe(0);
    const listed = spawnSync("tar", ["-tv", "-f", "-"], { input: tar, encoding: "utf8" });
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(/ 7 .*request\.json\n$/);
    const read = spawnSync("tar", ["-xO", "-f", "-"], { input: tar, encoding: "utf8" });
    expect(read.stdout).toBe('{"a":1}');
  });
});

describe("settings and routes", () => {
  it("reads PLANPORT_EXEC_* with defaults and refuses nonsense", () => {
    const s = execSettings({}, 8, "planport-exec:0.1.0");
    expect(s).toMatchObject({ image: "planport-exec:0.1.0", ownImage: true, network: false });
    expect(s.nanoCpus).toBe(2e9);
    expect(execSettings({}, 1, "i").nanoCpus).toBe(1e9);
    const custom = execSettings(
      { PLANPORT_EXEC_IMAGE: "mine", PLANPORT_EXEC_NETWORK: "on", PLANPORT_EXEC_MEMORY: "512m" },
      4,
      "i",
    );
    expect(custom).toMatchObject({ image: "mine", ownImage: false, network: true });
    expect(custom.memoryBytes).toBe(512 * 1024 * 1024);
    expect(() => execSettings({ PLANPORT_EXEC_NETWORK: "yes" }, 2, "i")).toThrow(/on or off/);
    expect(() => execSettings({ PLANPORT_EXEC_MEMORY: "lots" }, 2, "i")).toThrow(/MEMORY/);
  });

  it("routes the runner's API", () => {
    expect(routeOf("GET", "/v1/health")).toEqual({ kind: "health" });
    expect(routeOf("PUT", "/v1/sessions/s1/workspace")).toEqual({ kind: "workspace" });
    expect(routeOf("POST", "/v1/sessions/s1/run")).toEqual({ kind: "run" });
    expect(routeOf("DELETE", "/v1/sessions/s1")).toEqual({ kind: "delete" });
    expect(routeOf("GET", "/v1/sessions/s1/run")).toBeUndefined();
    expect(routeOf("PUT", "/v1/sessions/a/b/workspace")).toBeUndefined();
  });
});

describe("the local executor's health sentences", () => {
  it("says what to do when Docker does not answer or refuses this user", () => {
    expect(dockerUnavailable("/var/run/docker.sock", "ENOENT", "")).toMatch(
      /^Docker is not available: nothing answers at \/var\/run\/docker\.sock\. Install Docker and start it \(dockerd\)/,
    );
    expect(dockerUnavailable("/var/run/docker.sock", "ECONNREFUSED", "")).toContain("dockerd");
    expect(dockerUnavailable("/var/run/docker.sock", "EACCES", "")).toContain(
      "permission denied on /var/run/docker.sock. Add yourself to the docker group",
    );
  });

  it("says how to build a missing or outdated image, and accepts a current one", () => {
    const own = { ownImage: true, digest: "d1" };
    expect(imageHealth("planport-exec:0.1.0", undefined, own).reason).toContain(
      "planport executor --build-image",
    );
    expect(
      imageHealth("planport-exec:0.1.0", { [IMAGE_DIGEST_LABEL]: "d0" }, own).reason,
    ).toContain("out of date");
    expect(imageHealth("planport-exec:0.1.0", { [IMAGE_DIGEST_LABEL]: "d1" }, own)).toEqual({
      ok: true,
      executor: "docker",
      image: "planport-exec:0.1.0",
    });
    expect(imageHealth("mine", {}, { ownImage: false, digest: "d1" }).ok).toBe(true);
    expect(imageHealth("mine", undefined, { ownImage: false, digest: "d1" }).reason).toContain(
      "PLANPORT_EXEC_IMAGE",
    );
  });
});
