import { type Connection, connect, type ServerSource } from "../cli/connection.ts";
import { terminalText } from "../terminal/text.ts";

/**
 * The MCP server's one connection, made on the first tool call exactly as a CLI command makes
 * it (cli/connection.ts: flags, `PLANPORT_URL`/`PLANPORT_TOKEN`, `planport serve`'s config,
 * else the embedded local worker, started on demand) and kept until the server closes: a
 * session started by `plan` must stay reachable for `wait_for_plan`. A failed attempt is
 * forgotten, so the next call tries again.
 */
export interface ConnectionHolder {
  /** With `start: false` (the read-only tools) the embedded worker is used only if it runs. */
  get(opts?: { start?: boolean }): Promise<Connection>;
  /** Where the server came from, once connected (for "cannot reach" advice). */
  source(): ServerSource | undefined;
  /** Leaves the embedded worker (it keeps running while sessions in it are open). */
  close(): Promise<void>;
}

/**
 * @example
 * const connection = lazyConnection({}, process.env);
 * const { api } = await connection.get();
 */
export function lazyConnection(
  flags: { server?: string; token?: string },
  env: NodeJS.ProcessEnv,
): ConnectionHolder {
  let pending: Promise<Connection> | null = null;
  let made: Connection | null = null;
  // stdout is the MCP transport: everything for people goes to stderr.
  const log = (m: string) => process.stderr.write(`planport mcp: ${terminalText(m)}\n`);
  return {
    get(opts = {}) {
      pending ??= connect(flags, { note: log, status: log }, env, opts).then(
        (conn) => {
          made = conn;
          return conn;
        },
        (err: unknown) => {
          pending = null;
          throw err;
        },
      );
      return pending;
    },
    source: () => made?.source,
    async close() {
      const conn = made ?? (await pending?.catch(() => null)) ?? null;
      made = null;
      pending = null;
      await conn?.release().catch(() => {});
    },
  };
}
