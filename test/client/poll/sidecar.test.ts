import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  acquirePollLock,
  loadSidecar,
  PollLockedError,
  removeSidecar,
  saveSidecar,
} from "../../../local-client/poll/sidecar.ts";

const ID = "ses_01jxlock000000000000000000";
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  env = { PLANPORT_HOME: mkdtempSync(join(tmpdir(), "planport-sidecar-")) };
});

describe("sidecar", () => {
  it("round-trips the cursor and scanner state, private to the user", () => {
    const path = saveSidecar(
      {
        sessionId: ID,
        server: "http://127.0.0.1:8787",
        repo: "/src/app",
        progress: {
          cursor: "evt_0000000000000007",
          scanner: { rejectCount: 2, openPlanCalls: ["p3"], everSeenPending: true },
        },
      },
      env,
    );
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadSidecar(ID, env)).toMatchObject({
      cursor: "evt_0000000000000007",
      repo: "/src/app",
      scanner: { rejectCount: 2, openPlanCalls: ["p3"] },
    });
    removeSidecar(ID, env);
    expect(loadSidecar(ID, env)).toBeNull();
  });

  it("an unreadable sidecar means starting from the top, not a crash", () => {
    const path = saveSidecar(
      {
        sessionId: ID,
        server: "s",
        progress: {
          cursor: null,
          scanner: { rejectCount: 0, openPlanCalls: [], everSeenPending: false },
        },
      },
      env,
    );
    writeFileSync(path, "{not json");
    expect(loadSidecar(ID, env)).toBeNull();
  });

  it("refuses ids that are not session ids (no paths out of the folder)", () => {
    expect(() => loadSidecar("../../etc/passwd", env)).toThrow(/not a session id/);
    expect(() => acquirePollLock("ses_../x", env)).toThrow(/not a session id/);
  });
});

describe("poll lock", () => {
  it("is refused while a live process holds it, and released only by its holder", async () => {
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], {
      stdio: "ignore",
    });
    try {
      const holderPid = holder.pid ?? -1;
      const releaseHolder = acquirePollLock(ID, env, holderPid);
      expect(() => acquirePollLock(ID, env)).toThrow(PollLockedError);
      expect(() => acquirePollLock(ID, env)).toThrow(new RegExp(`process ${holderPid}\\.$`));
      releaseHolder();
      const release = acquirePollLock(ID, env);
      releaseHolder(); // not the holder any more: must not remove our lock
      expect(() => acquirePollLock(ID, env, holderPid)).toThrow(PollLockedError);
      release();
    } finally {
      holder.kill();
      await once(holder, "exit");
    }
  });

  it("takes over the lock of a process that no longer exists", async () => {
    const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await once(gone, "exit");
    acquirePollLock(ID, env, gone.pid ?? -1);
    const lockPath = join(env.PLANPORT_HOME ?? "", "sessions", `${ID}.lock`);
    expect(readFileSync(lockPath, "utf8").trim()).toBe(String(gone.pid));
    const release = acquirePollLock(ID, env);
    expect(readFileSync(lockPath, "utf8").trim()).toBe(String(process.pid));
    release();
    expect(existsSync(lockPath)).toBe(false);
  });
});
