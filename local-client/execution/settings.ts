/**
 * The local executor's settings, from PLANPORT_EXEC_* (pure; docs/EXECUTION.md "Settings").
 */
export interface ExecSettings {
  /** The image commands run in. */
  image: string;
  /** Whether `image` is planport's own (then it must carry the current runner). */
  ownImage: boolean;
  /** Network on (Docker's default bridge) or off (NetworkMode "none"). */
  network: boolean;
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  /** A container with no workspace or run for this long stops by itself. */
  idleS: number;
}

const GIB = 1024 * 1024 * 1024;
const UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 * 1024, g: GIB };

/**
 * Reads the settings; a malformed value is an error naming the variable.
 *
 * @example
 * execSettings({ PLANPORT_EXEC_MEMORY: "4g" }, 8, "planport-exec:0.1.0").memoryBytes // → 4 GiB
 */
export function execSettings(
  env: NodeJS.ProcessEnv,
  cores: number,
  defaultImage: string,
): ExecSettings {
  const image = env.PLANPORT_EXEC_IMAGE?.trim() || defaultImage;
  const network = (env.PLANPORT_EXEC_NETWORK ?? "off").trim().toLowerCase();
  if (network !== "on" && network !== "off") {
    throw new Error(`PLANPORT_EXEC_NETWORK=${network}: say on or off`);
  }
  const cpus = number(env, "PLANPORT_EXEC_CPUS", Math.min(2, Math.max(1, cores)), 0.01, cores);
  return {
    image,
    ownImage: image === defaultImage,
    network: network === "on",
    memoryBytes: bytes(env.PLANPORT_EXEC_MEMORY, 2 * GIB),
    nanoCpus: Math.round(cpus * 1e9),
    pidsLimit: Math.round(number(env, "PLANPORT_EXEC_PIDS", 512, 16, 1_000_000)),
    idleS: Math.round(number(env, "PLANPORT_EXEC_IDLE_S", 900, 10, 7 * 24 * 3600)),
  };
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number) {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new Error(`${name}=${text}: give a number from ${min} to ${max}`);
  }
  return value;
}

function bytes(text: string | undefined, fallback: number): number {
  if (text === undefined || text.trim() === "") return fallback;
  const match = /^(\d+(?:\.\d+)?)\s*([kmg]?)i?b?$/i.exec(text.trim());
  const unit = UNITS[(match?.[2] ?? "").toLowerCase()];
  const value = match === null || unit === undefined ? Number.NaN : Number(match[1]) * unit;
  if (!(value >= 64 * 1024 * 1024)) {
    throw new Error(`PLANPORT_EXEC_MEMORY=${text}: give a size of at least 64m, e.g. 2g or 4096m`);
  }
  return Math.round(value);
}
