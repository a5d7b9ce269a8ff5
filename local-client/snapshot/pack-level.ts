/**
 * How hard a blob pack is compressed, by where it goes (issue 34). A server on this machine —
 * the embedded worker `planport plan` starts, or `wrangler dev` — shares the machine's cores
 * with the client, and its "network" is memory: deflate at gzip's level 6 there costs as much
 * CPU as the whole of `git archive | gzip -6` and saves nothing, while the worker waits for
 * the cores to gunzip, hash and store. Any other server is reached over a real network, where
 * the bytes level 6 saves are worth its time. Blob packs are named by their blobs' ids, not by
 * their bytes, so the level changes nothing the server checks.
 */

/** gzip level for a server across a network: the default of `gzip` and `git archive | gzip`. */
export const REMOTE_PACK_LEVEL = 6;
/** gzip level for a server on this machine: zlib's fastest that still compresses. */
export const LOOPBACK_PACK_LEVEL = 1;

/**
 * The gzip level for blob packs sent to `server` (a URL).
 *
 * @example
 * packLevelFor("http://127.0.0.1:8787") // 1
 * packLevelFor("https://planport.example.workers.dev") // 6
 */
export function packLevelFor(server: string): number {
  return isLoopbackUrl(server) ? LOOPBACK_PACK_LEVEL : REMOTE_PACK_LEVEL;
}

/**
 * True for a URL whose host is this machine by its address or by the name the resolver is
 * bound to answer with loopback (RFC 6761): 127.0.0.0/8, ::1, `localhost` and `*.localhost`.
 * Any other name is remote, even one a hosts file points here: guessing wrong that way only
 * costs CPU.
 *
 * @example
 * isLoopbackUrl("http://[::1]:8787/") // true
 * isLoopbackUrl("http://127.0.0.1.example.com") // false
 */
export function isLoopbackUrl(server: string): boolean {
  let host: string;
  try {
    host = new URL(server).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === "[::1]" || host === "localhost" || host.endsWith(".localhost")) return true;
  const octets = host.split(".");
  return (
    octets.length === 4 &&
    octets[0] === "127" &&
    octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255)
  );
}
