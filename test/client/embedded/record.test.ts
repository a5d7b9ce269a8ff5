import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { ownUid, processFacts } from "../../../local-client/embedded/process-facts.ts";
import { type EmbeddedRecord, isRecordedProcess } from "../../../local-client/embedded/record.ts";

const record: EmbeddedRecord = {
  pid: 4242,
  port: 8787,
  url: "http://127.0.0.1:8787",
  persist_dir: "/home/me/.local/share/planport/persist",
  launched_at: "2026-12-06T10:00:00.000Z",
  started_at: "2026-12-06T10:00:01.000Z",
};
const at = (iso: string) => Date.parse(iso);
const host = {
  pid: 4242,
  uid: 1000,
  startedAtMs: at("2026-12-06T10:00:00.100Z"),
  args: "/usr/bin/node /pkg/dist/cli/worker-host.js --port 8787 --persist /home/me/.local/share/planport/persist",
};

describe("is a recorded pid still the recorded worker", () => {
  it("yes: this user's worker host on the state folder, started while the worker started", () => {
    expect(isRecordedProcess(record, host, 1000, "host")).toBe(true);
    // ps tells start times to the second, truncated.
    expect(
      isRecordedProcess(
        record,
        { ...host, startedAtMs: at("2026-12-06T09:59:59.000Z") },
        1000,
        "host",
      ),
    ).toBe(true);
  });

  it("no: another user's process, whatever its command line says", () => {
    expect(isRecordedProcess(record, { ...host, uid: 65534 }, 1000, "host")).toBe(false);
  });

  it("no: a process that started after the record (the pid was reused)", () => {
    expect(
      isRecordedProcess(record, { ...host, startedAtMs: at("2026-12-06T12:00:00Z") }, 1000, "host"),
    ).toBe(false);
    expect(
      isRecordedProcess(record, { ...host, startedAtMs: at("2026-12-05T12:00:00Z") }, 1000, "host"),
    ).toBe(false);
  });

  it("no: another program, or a worker on another state folder", () => {
    expect(isRecordedProcess(record, { ...host, args: "vim notes.md" }, 1000, "host")).toBe(false);
    expect(
      isRecordedProcess(
        record,
        { ...host, args: "/usr/bin/node /pkg/dist/cli/worker-host.js --persist /other" },
        1000,
        "host",
      ),
    ).toBe(false);
  });

  it("the runtime: workerd of this user started in the window; another project's wrangler dev is not", () => {
    const workerd = {
      ...host,
      pid: 4250,
      args: "/pkg/node_modules/workerd/bin/workerd serve --experimental /x.capnp",
    };
    expect(isRecordedProcess(record, workerd, 1000, "runtime")).toBe(true);
    expect(
      isRecordedProcess(
        record,
        { ...workerd, startedAtMs: at("2026-12-07T00:00:00Z") },
        1000,
        "runtime",
      ),
    ).toBe(false);
    expect(isRecordedProcess(record, { ...workerd, uid: 0 }, 1000, "runtime")).toBe(false);
    expect(isRecordedProcess(record, { ...workerd, args: "sleep 100" }, 1000, "runtime")).toBe(
      false,
    );
  });

  it("an older record without launched_at: the two minutes before started_at", () => {
    const legacy = { ...record, launched_at: undefined };
    expect(
      isRecordedProcess(legacy, { ...host, startedAtMs: at("2026-12-06T09:58:30Z") }, 1000, "host"),
    ).toBe(true);
    expect(
      isRecordedProcess(legacy, { ...host, startedAtMs: at("2026-12-06T09:50:00Z") }, 1000, "host"),
    ).toBe(false);
  });

  it("no facts (no such process) is never the worker", () => {
    expect(isRecordedProcess(record, null, 1000, "host")).toBe(false);
  });
});

describe("process facts", () => {
  it("of a live child: its owner, a start time within its spawning, its arguments", async () => {
    const before = Date.now();
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    await once(child, "spawn");
    const after = Date.now();
    try {
      const facts = processFacts(child.pid as number);
      expect(facts?.uid).toBe(ownUid());
      expect(facts?.args).toBe("sleep 30");
      // /proc counts in 10 ms ticks, ps in whole seconds.
      expect(facts?.startedAtMs).toBeGreaterThanOrEqual(before - 1_000);
      expect(facts?.startedAtMs).toBeLessThanOrEqual(after + 1_000);
    } finally {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
    // Gone (and reaped): no facts.
    expect(processFacts(child.pid as number)).toBeNull();
  });

  it("of no process: null", () => {
    expect(processFacts(-1)).toBeNull();
    expect(processFacts(2 ** 22 + 7)).toBeNull();
  });
});
