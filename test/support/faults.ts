/**
 * Helpers for the fault, fuzz and hostile-input tests (issue 6). Web APIs only, so they run
 * inside workerd and in Node: hostile tar metadata the plain tar writer cannot express (PAX
 * records, header fields a careful packer never writes), checks that an event feed survived a
 * crash intact, and polling for a condition. Node-only helpers (an HTTP tap, memory sampling)
 * are in `faults-node.ts`.
 */

import type { Event } from "../../src/protocol/index.ts";
import { concat, gzip, header, padded, writeChecksum } from "./tarballs.ts";

const BLOCK_BYTES = 512;
const encoder = new TextEncoder();

/**
 * modern-tar refuses PAX or GNU long-name metadata over 8 MiB; the hostile archives stay just
 * under it, the largest a single entry can claim.
 */
export const TAR_MAX_META_BYTES = 8 * 1024 * 1024;

/**
 * One PAX record, `"<length> <key>=<value>\n"`, where the length counts the whole record,
 * its own digits included.
 *
 * @example paxRecord("path", "a.txt") // "14 path=a.txt\n"
 */
export function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  const restBytes = encoder.encode(rest).byteLength;
  let length = restBytes + 1;
  while (String(length).length + restBytes !== length) length = String(length).length + restBytes;
  return `${length}${rest}`;
}

/** An entry of {@link hostileTarGz}: an ordinary tar entry whose real name comes from PAX. */
export interface PaxEntry {
  /** The name the PAX `path` record gives (overrides the header's). */
  paxPath: string;
  /** Tar typeflag of the entry itself: "0" file, "1" hard link, "2" symlink, "3" device… */
  typeflag?: string;
  body?: string;
  linkname?: string;
}

/**
 * tar.gz of entries named through PAX extended headers, the way GNU tar and git archive write
 * long names. Each entry is a PAX header block, its records, then the entry's own header
 * (named `placeholder`) and body.
 *
 * @example
 * const body = await hostileTarGz([{ paxPath: "../../etc/cron.d/evil", body: "* * * * * root sh\n" }]);
 */
export async function hostileTarGz(entries: readonly PaxEntry[]): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    const records = encoder.encode(paxRecord("path", entry.paxPath));
    parts.push(header(encoder.encode("PaxHeader/placeholder"), "x", records.byteLength));
    parts.push(...padded(records));
    const body = encoder.encode(entry.body ?? "");
    const typeflag = entry.typeflag ?? "0";
    const size = typeflag === "0" ? body.byteLength : 0;
    parts.push(header(encoder.encode("placeholder"), typeflag, size, entry.linkname));
    if (size > 0) parts.push(...padded(body));
  }
  parts.push(new Uint8Array(BLOCK_BYTES * 2));
  return gzip(concat(parts));
}

/**
 * A metadata bomb: `count` symlinks, each named by a PAX path of almost 8 MiB. Tiny when
 * gzipped (a few KB each), under the 100 MiB tar limit when `count` ≤ 12, and every name is
 * something a careless skip list would keep whole.
 *
 * @example const body = await paxNameBomb(12);
 */
export function paxNameBomb(count: number): Promise<Uint8Array> {
  const name = "n/".repeat((TAR_MAX_META_BYTES - 64) / 2);
  return hostileTarGz(
    Array.from({ length: count }, (_, i) => ({
      paxPath: `${i}/${name}`,
      typeflag: "2",
      linkname: "/etc/passwd",
    })),
  );
}

/**
 * A tar header block with arbitrary field bytes, for fuzzing the archive reader: `name` and
 * `typeflag` as given, `sizeField` written verbatim into the 12-byte size field (octal, base-256
 * or junk), a correct checksum unless `badChecksum`.
 */
export function rawHeader(fields: {
  name: Uint8Array;
  typeflag: number;
  sizeField: Uint8Array;
  badChecksum?: boolean;
}): Uint8Array {
  const block = header(fields.name, String.fromCharCode(fields.typeflag), 0);
  block.fill(0, 124, 136);
  block.set(fields.sizeField.subarray(0, 12), 124);
  writeChecksum(block, fields.badChecksum ? 1 : 0);
  return block;
}

/** What is wrong with a feed read after a crash, compared with one read before it; [] = intact. */
export function feedProblems(before: readonly Event[], after: readonly Event[]): string[] {
  const problems: string[] = [];
  const ids = after.map((e) => e.id);
  if (new Set(ids).size !== ids.length) problems.push("an event id appears twice");
  ids.forEach((id, i) => {
    const expected = `evt_${String(i + 1).padStart(16, "0")}`;
    if (id !== expected) problems.push(`event ${i + 1} has id ${id}, expected ${expected}`);
  });
  if (after.length < before.length)
    problems.push(`${before.length - after.length} event(s) read before the crash are gone`);
  before.forEach((event, i) => {
    if (JSON.stringify(after[i]) !== JSON.stringify(event))
      problems.push(`event ${event.id} changed after the crash`);
  });
  return problems;
}

/** The text blocks of every assistant reply, in feed order. */
export function assistantTexts(events: readonly Event[]): string[] {
  return events.flatMap((e) =>
    e.type === "assistant"
      ? e.message.content.flatMap((b) => (b.type === "text" ? [b.text] : []))
      : [],
  );
}

/** Every tool result answering `toolUseId`, as text (exactly one, when nothing was repeated). */
export function resultsFor(events: readonly Event[], toolUseId: string): string[] {
  const texts: string[] = [];
  for (const e of events) {
    if (e.type !== "user" || typeof e.message.content === "string") continue;
    for (const block of e.message.content) {
      if (block.type !== "tool_result" || block.tool_use_id !== toolUseId) continue;
      texts.push(
        typeof block.content === "string"
          ? block.content
          : block.content.map((c) => c.text).join(""),
      );
    }
  }
  return texts;
}

/** The ids of every ExitPlanMode call, in feed order. */
export function exitPlanModeCalls(events: readonly Event[]): string[] {
  return events.flatMap((e) =>
    e.type === "assistant"
      ? e.message.content.flatMap((b) =>
          b.type === "tool_use" && b.name === "ExitPlanMode" ? [b.id] : [],
        )
      : [],
  );
}

/**
 * Polls `probe` until it returns a value other than undefined, or throws after `timeoutMs`
 * naming `what` it waited for.
 *
 * @example
 * const id = await waitUntil(() => pendingPlanCall(api, session.id), { what: "a plan" });
 */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined | null> | T | undefined | null,
  opts: { what: string; timeoutMs?: number; everyMs?: number },
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null) return value;
    if (Date.now() > deadline)
      throw new Error(`gave up waiting for ${opts.what} after ${opts.timeoutMs ?? 30_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, opts.everyMs ?? 100));
  }
}

/**
 * tar.gz of `count` tiny files (`files/NNNNNN.txt`), written to the compressor in 1 MiB
 * blocks rather than 512-byte ones: 100,000 files gzip in a fraction of the time.
 *
 * @example const body = await floodTarGz(100_000);
 */
export async function floodTarGz(count: number): Promise<Uint8Array> {
  const stream = new CompressionStream("gzip");
  const writer = stream.writable.getWriter();
  const out = new Response(stream.readable).arrayBuffer();
  const blockBytes = 1024 * 1024;
  let block = new Uint8Array(blockBytes);
  let used = 0;
  const push = async (bytes: Uint8Array) => {
    if (used + bytes.byteLength > blockBytes) {
      await writer.write(block.subarray(0, used));
      block = new Uint8Array(blockBytes);
      used = 0;
    }
    block.set(bytes, used);
    used += bytes.byteLength;
  };
  for (let i = 0; i < count; i++) {
    const body = encoder.encode(`file ${i}\n`);
    await push(
      header(encoder.encode(`files/${String(i).padStart(6, "0")}.txt`), "0", body.byteLength),
    );
    const padded = new Uint8Array(BLOCK_BYTES);
    padded.set(body);
    await push(padded);
  }
  await push(new Uint8Array(BLOCK_BYTES * 2));
  await writer.write(block.subarray(0, used));
  await writer.close();
  return new Uint8Array(await out);
}
