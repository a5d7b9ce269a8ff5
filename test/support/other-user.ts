import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canSwitchUser, UNPRIVILEGED } from "./installed-package.ts";

/**
 * A second, real user of the machine (`nobody`) against planport's processes: what another
 * account on a shared machine can reach, connect to, bind and read. The tests run as root and
 * switch to `nobody` for the other user's side (runuser, an empty environment, a home of its
 * own), so each check is made with that user's real permissions. Linux only.
 */

export { canSwitchUser };

/** The other user's programs (plain JavaScript: they run with Node alone, as `nobody`). */
const PROBE = String.raw`
import { createServer } from "node:net";
import { readdirSync, readFileSync, appendFileSync } from "node:fs";
const [mode, ...args] = process.argv.slice(2);

// attack PORT… -- PATH…: every request another user could try without a token, each answer
// printed as a JSON line; the paths are files to ask Miniflare's call-back server for.
if (mode === "attack") {
  const sep = args.indexOf("--");
  const ports = args.slice(0, sep);
  const [tokenPath, writeTarget, sessionId] = args.slice(sep + 1);
  const stack = "Error: x\n    at f (" + tokenPath + ":1:1)\n    at g (/proc/self/environ:1:1)";
  const tries = [
    ["POST", "/core/error", JSON.stringify({ message: "x", name: "Error", stack })],
    ["POST", "/core/store-temp-file?extension=" + encodeURIComponent("/../../../../../../.." + writeTarget), "pwned"],
    ["POST", "/core/log", "x"],
    ["GET", "/core/dev-registry"],
    ["GET", "/core/public-url"],
    ["GET", "/cdn-cgi/explorer"],
    ["GET", "/cdn-cgi/explorer/api/local/workers"],
    ["GET", "/cdn-cgi/handler/scheduled"],
    ["GET", "/cdn-cgi/mf/scheduled"],
    ["GET", "/cdn-cgi/platform-proxy"],
    ["GET", "/v1/sessions"],
    ["POST", "/v1/sessions", JSON.stringify({ prompt: "x" })],
    ["GET", "/v1/sessions/" + sessionId],
    ["GET", "/v1/sessions/" + sessionId + "/plan"],
    ["GET", "/v1/sessions/" + sessionId + "/events"],
    ["POST", "/v1/sessions/" + sessionId + "/archive"],
    ["GET", "/review/" + sessionId],
    ["GET", "/v1/healthz"],
    // The local executor's API (commands in Docker): every route wants its token.
    ["GET", "/v1/health"],
    ["PUT", "/v1/sessions/" + sessionId + "/workspace", "not a tar"],
    ["POST", "/v1/sessions/" + sessionId + "/run", JSON.stringify({ command: "id > /tmp/pwned", timeout_ms: 1000, files: [] })],
    ["DELETE", "/v1/sessions/" + sessionId],
  ];
  for (const port of ports) {
    for (const [method, path, body] of tries) {
      let status = 0;
      let text = "";
      try {
        const res = await fetch("http://127.0.0.1:" + port + path, { method, body, headers: body ? { "content-type": "application/json" } : {} });
        status = res.status;
        text = (await res.text()).slice(0, 1_000_000);
      } catch (err) {
        text = String(err.cause?.code ?? err.message);
      }
      console.log(JSON.stringify({ port: Number(port), method, path, status, body: text }));
    }
  }
}

// impostor PORT LOG: a server on the port that answers every request 200 {"ok": true} and
// logs each one (its first line and whether it carried a credential) to LOG.
// squat MARKER LOG: watches the process list for a worker host whose arguments hold MARKER
// and binds its --port first, then answers as the impostor.
if (mode === "impostor" || mode === "squat") {
  const log = args[1];
  let port = Number(args[0]);
  if (mode === "squat") {
    port = 0;
    while (port === 0) {
      for (const pid of readdirSync("/proc")) {
        if (!/^\d+$/.test(pid)) continue;
        let cmd;
        try { cmd = readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\0"); } catch { continue; }
        if (!cmd.some((a) => a.includes("worker-host")) || !cmd.some((a) => a.includes(args[0]))) continue;
        const at = cmd.indexOf("--port");
        if (at !== -1 && Number(cmd[at + 1]) > 0) port = Number(cmd[at + 1]);
      }
    }
  }
  const server = createServer((socket) => {
    let seen = "";
    socket.on("data", (chunk) => {
      seen += chunk.toString("latin1");
      if (!seen.includes("\r\n\r\n")) return;
      const head = seen.slice(0, seen.indexOf("\r\n\r\n"));
      appendFileSync(log, JSON.stringify({ line: head.split("\r\n")[0], authorization: /\r\nauthorization:/i.test(head), review_key: /\r\nx-review-key:/i.test(head) }) + "\n");
      socket.end("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"ok\":true}");
      seen = "";
    });
    socket.on("error", () => {});
  });
  const bind = () => server.listen({ port, host: "127.0.0.1", exclusive: true }, () => console.log("listening " + port));
  server.on("error", () => setTimeout(bind, 1));
  bind();
}

// sleeper ARGS…: a process group led by this user whose command line looks like planport's
// worker host, with a child that looks like workerd.
if (mode === "sleeper") {
  const { spawn } = await import("node:child_process");
  spawn("/bin/bash", ["-c", "exec -a /opt/x/workerd sleep 600"], { stdio: "ignore" });
  console.log("ready");
  setInterval(() => {}, 1000);
}
`;

export interface OtherUser {
  /** A folder both users may read and write (the probe, logs). */
  dir: string;
  /** Runs the probe as the other user; resolves with its output when it ends. */
  run(mode: string, args: string[]): Promise<{ code: number | null; stdout: string }>;
  /** Starts the probe as the other user and leaves it running (`stop()` ends it). */
  start(mode: string, args: string[]): ChildProcess;
}

/**
 * The other user, with a folder of its own the test can read.
 *
 * @example
 * const other = otherUser();
 * const { stdout } = await other.run("attack", [String(port), "--", tokenPath, target, id]);
 */
export function otherUser(): OtherUser {
  const dir = mkdtempSync(join(tmpdir(), "planport-other-user-"));
  chmodSync(dir, 0o777);
  const probe = join(dir, "probe.mjs");
  writeFileSync(probe, PROBE, { mode: 0o644 });
  // setpriv, not runuser: it execs the command itself, so a probe that leads a process group
  // is the other user's process, as another user's program would be.
  const argv = (mode: string, args: string[]) => [
    `--reuid=${otherUid()}`,
    `--regid=${otherGid()}`,
    "--clear-groups",
    "env",
    "-i",
    `HOME=${dir}`,
    "PATH=/usr/bin:/bin",
    process.execPath,
    probe,
    mode,
    ...args,
  ];
  return {
    dir,
    async run(mode, args) {
      const child = spawn("setpriv", argv(mode, args), { stdio: ["ignore", "pipe", "inherit"] });
      let stdout = "";
      child.stdout?.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
      });
      const [code] = await once(child, "exit");
      return { code: code as number | null, stdout };
    },
    start(mode, args) {
      // Its own process group, so stopping it stops what it started too.
      return spawn("setpriv", argv(mode, args), {
        stdio: ["ignore", "pipe", "inherit"],
        detached: true,
      });
    },
  };
}

/** Ends a started probe and everything it started. */
export async function stopProbe(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-(child.pid as number), "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
  await once(child, "exit");
}

/** The uid of the other user. */
export function otherUid(): number {
  return Number(execFileSync("id", ["-u", UNPRIVILEGED], { encoding: "utf8" }).trim());
}

function otherGid(): number {
  return Number(execFileSync("id", ["-g", UNPRIVILEGED], { encoding: "utf8" }).trim());
}

/**
 * The TCP ports the given processes listen on (IPv4 and IPv6), from /proc.
 *
 * @example
 * listeningPorts([record.pid, record.runtime_pid]) // → [43867]
 */
export function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match?.[1] !== undefined) inodes.add(match[1]);
      } catch {
        // Closed while we looked.
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is field 1 ("ADDR:PORT" in hex), st field 3 (0A = LISTEN), inode field 9.
      if (fields[3] !== "0A" || !inodes.has(fields[9] ?? "")) continue;
      ports.add(Number.parseInt((fields[1] ?? "").split(":")[1] ?? "", 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** The pids in a process group. */
export function groupPids(groupId: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === groupId && fields[0] !== "Z") pids.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return pids;
}
