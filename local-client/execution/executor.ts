import { createHash, randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { type ExecutorHealth, type RunRequest, RunResult } from "../../src/protocol/execution.ts";
import { type DockerClient, DockerError } from "./docker.ts";
import { dockerUnavailable, imageHealth } from "./health.ts";
import type { ExecSettings } from "./settings.ts";
import { singleFileTar } from "./tar.ts";

/**
 * The local executor: one Docker container per session, made on the session's first
 * workspace, holding nothing of the host — no mount, no host environment, no network unless
 * turned on — and removed when the session ends, when the executor stops, or by the next
 * executor started on the same state folder after a crash.
 */

export const EXECUTOR_LABEL = "dev.planport.executor";
export const SESSION_LABEL = "dev.planport.session";
/** Where the runner lives in the image (container/Dockerfile). */
const RUNNER = ["node", "/opt/planport/runner.mjs"];
const STATE_DIR = "/var/lib/planport";
/** The runner's own work around a command (writing files, two git snapshots) may take this long. */
const RUN_OVERHEAD_MS = 120_000;
const RUN_OUTPUT_MAX_BYTES = 128 * 1024 * 1024;

/** The executor's id: one per user and state folder, so its containers are recognised later. */
export function executorId(stateDir: string, uid = process.getuid?.() ?? 0): string {
  return createHash("sha256")
    .update(`${uid}\0${resolve(stateDir)}`)
    .digest("hex")
    .slice(0, 16);
}

/** A refusal with the protocol's error code and HTTP status. */
export class ExecutorError extends Error {
  override readonly name = "ExecutorError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class DockerExecutor {
  private readonly sessions = new Map<string, string>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly docker: DockerClient,
    private readonly settings: ExecSettings,
    readonly id: string,
    private readonly imageDigest: string | undefined,
    private readonly log: (line: string) => void = () => {},
  ) {}

  async health(): Promise<ExecutorHealth> {
    try {
      await this.docker.ping();
      const labels = await this.docker.imageLabels(this.settings.image);
      return imageHealth(this.settings.image, labels, {
        ownImage: this.settings.ownImage,
        digest: this.imageDigest,
      });
    } catch (err) {
      const e = err instanceof DockerError ? err : new DockerError(String(err));
      return {
        ok: false,
        executor: "docker",
        image: this.settings.image,
        reason: dockerUnavailable(this.docker.socketPath, e.code, e.message),
      };
    }
  }

  /** Removes every container an executor with this id left (a host killed with kill -9). */
  async reap(): Promise<number> {
    const left = await this.docker.listContainers([`${EXECUTOR_LABEL}=${this.id}`]);
    for (const container of left) await this.docker.removeContainer(container.Id);
    if (left.length > 0) this.log(`removed ${left.length} container(s) an earlier executor left`);
    return left.length;
  }

  /** Replaces the session's workspace with `tar`, starting its container when needed. */
  putWorkspace(session: string, tar: Buffer): Promise<void> {
    return this.serial(session, async () => {
      const container = (await this.liveContainer(session)) ?? (await this.startContainer(session));
      await this.docker.putArchive(container, STATE_DIR, singleFileTar("incoming.tar", tar));
      await this.runner(container, ["init", `${STATE_DIR}/incoming.tar`], RUN_OVERHEAD_MS);
    });
  }

  /** Runs one command in the session's workspace. */
  run(session: string, request: RunRequest): Promise<RunResult> {
    return this.serial(session, async () => {
      const container = this.sessions.get(session);
      if (container === undefined) throw workspaceMissing(session);
      const file = `request-${randomBytes(8).toString("hex")}.json`;
      try {
        await this.docker.putArchive(
          container,
          STATE_DIR,
          singleFileTar(file, Buffer.from(JSON.stringify(request))),
        );
      } catch (err) {
        if (err instanceof DockerError && err.status === 404) {
          this.sessions.delete(session);
          throw workspaceMissing(session);
        }
        throw err;
      }
      const text = await this.runner(
        container,
        ["run", "--request", `${STATE_DIR}/${file}`],
        request.timeout_ms + RUN_OVERHEAD_MS,
        session,
      );
      return RunResult.parse(JSON.parse(text));
    });
  }

  /**
   * Ends the session's container (idempotent): at once — a command running in it (up to its
   * 10-minute timeout) must not hold the release of a session that ended, so it is stopped with
   * its container — and again, without waiting for it, once whatever was queued for the session
   * has settled (a container being started at that moment).
   */
  async remove(session: string): Promise<void> {
    await this.removeNow(session);
    void this.serial(session, () => this.removeNow(session)).catch((err: unknown) =>
      this.log(`session ${session}: a container left after its release: ${String(err)}`),
    );
  }

  private async removeNow(session: string): Promise<void> {
    const container = this.sessions.get(session);
    this.sessions.delete(session);
    if (container !== undefined) await this.docker.removeContainer(container);
    // One made by an earlier executor with this id, or whose creation we lost track of.
    for (const left of await this.docker.listContainers([
      `${EXECUTOR_LABEL}=${this.id}`,
      `${SESSION_LABEL}=${session}`,
    ])) {
      await this.docker.removeContainer(left.Id);
    }
  }

  /** Removes every container of this executor (its stop). */
  async removeAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((session) => this.remove(session)));
    await this.reap();
  }

  private async liveContainer(session: string): Promise<string | undefined> {
    const container = this.sessions.get(session);
    if (container === undefined) return undefined;
    const info = await this.docker.inspectContainer(container);
    const running = (info?.State as { Running?: boolean } | undefined)?.Running === true;
    if (running) return container;
    this.sessions.delete(session);
    if (info !== undefined) await this.docker.removeContainer(container);
    return undefined;
  }

  private async startContainer(session: string): Promise<string> {
    const s = this.settings;
    const id = await this.docker.createContainer({
      Image: s.image,
      Cmd: ["idle"],
      Env: [`PLANPORT_IDLE_S=${s.idleS}`],
      Hostname: "planport-exec",
      WorkingDir: "/workspace",
      Labels: { [EXECUTOR_LABEL]: this.id, [SESSION_LABEL]: session },
      HostConfig: {
        AutoRemove: true,
        NetworkMode: s.network ? "bridge" : "none",
        Memory: s.memoryBytes,
        MemorySwap: s.memoryBytes,
        NanoCpus: s.nanoCpus,
        PidsLimit: s.pidsLimit,
        // The runner (root in the container) writes the workspace as the commands' user and
        // ends that user's processes; commands themselves run as that user, with none of these.
        CapDrop: ["ALL"],
        CapAdd: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"],
        SecurityOpt: ["no-new-privileges"],
        Binds: [],
        Mounts: [],
      },
    });
    try {
      await this.docker.startContainer(id);
    } catch (err) {
      await this.docker.removeContainer(id).catch(() => {});
      throw err;
    }
    this.sessions.set(session, id);
    this.log(`session ${session}: container ${id.slice(0, 12)} started`);
    return id;
  }

  /**
   * Runs the runner in the container; a refusal (exit 3) becomes an ExecutorError. Past the
   * deadline the container is removed: a runner that hangs must not hold the session.
   */
  private async runner(
    container: string,
    args: string[],
    deadlineMs: number,
    session?: string,
  ): Promise<string> {
    let out: Awaited<ReturnType<DockerClient["exec"]>>;
    try {
      out = await this.docker.exec(
        container,
        [...RUNNER, ...args],
        deadlineMs,
        RUN_OUTPUT_MAX_BYTES,
      );
    } catch (err) {
      if (err instanceof DockerError && err.code === "ETIMEDOUT") {
        await this.docker.removeContainer(container).catch(() => {});
        if (session !== undefined) this.sessions.delete(session);
        throw new ExecutorError(
          503,
          "executor_unavailable",
          `the command runner did not answer within ${deadlineMs} ms; its container was removed (send the workspace again)`,
        );
      }
      if (err instanceof DockerError && (err.status === 404 || err.status === 409) && session) {
        this.sessions.delete(session);
        throw workspaceMissing(session);
      }
      throw err;
    }
    const text = out.stdout.toString("utf8");
    if (out.exitCode === 0) return text;
    if (out.exitCode === 3) {
      const refusal = JSON.parse(text) as { error: { code: string; message: string } };
      const status = refusal.error.code === "workspace_missing" ? 409 : 400;
      throw new ExecutorError(status, refusal.error.code, refusal.error.message);
    }
    throw new Error(
      `the command runner failed (exit ${out.exitCode}): ${out.stderr.toString("utf8").trim().slice(-2000)}`,
    );
  }

  private serial<T>(session: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(session) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.queues.set(session, settled);
    void settled.then(() => {
      if (this.queues.get(session) === settled) this.queues.delete(session);
    });
    return next;
  }
}

function workspaceMissing(session: string): ExecutorError {
  return new ExecutorError(
    409,
    "workspace_missing",
    `session ${session} has no workspace here (never sent, or its container ended): send it again`,
  );
}
