import { type CommandOutput, OUTPUT_LIMIT_BYTES } from "../../src/protocol/execution.ts";

/**
 * A stream's kept head (pure): the first `limit` bytes and a count of all of them. A command
 * may print gigabytes; only the head is ever held.
 *
 * @example
 * const head = new OutputHead();
 * child.stdout.on("data", (chunk) => head.push(chunk));
 * head.output() // → { text, bytes, cut }
 */
export class OutputHead {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;

  constructor(private readonly limit = OUTPUT_LIMIT_BYTES) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
  }

  output(): CommandOutput {
    return cutOutput(Buffer.concat(this.chunks), this.total, this.limit);
  }
}

/** How close to the limit a line end must be for the cut to fall there instead. */
export const NEAR_LINE_END_BYTES = 2048;

/**
 * The text a tool result keeps of a stream whose first bytes are `head` and whose length is
 * `total`: all of it when it fits; else the head cut at the last line end within
 * {@link NEAR_LINE_END_BYTES} of the limit, or at the limit on a character boundary.
 *
 * @example
 * cutOutput(Buffer.from("a\nb"), 3, 10) // → { text: "a\nb", bytes: 3, cut: false }
 */
export function cutOutput(head: Buffer, total: number, limit = OUTPUT_LIMIT_BYTES): CommandOutput {
  if (total <= limit && head.length === total) {
    return { text: head.toString("utf8"), bytes: total, cut: false };
  }
  let end = Math.min(head.length, limit);
  const lineEnd = head.lastIndexOf(0x0a, end - 1);
  if (lineEnd >= 0 && end - (lineEnd + 1) <= NEAR_LINE_END_BYTES) end = lineEnd + 1;
  else end = characterBoundary(head, end);
  return { text: head.subarray(0, end).toString("utf8"), bytes: total, cut: true };
}

/** `end`, or earlier so that the bytes before it do not end inside a UTF-8 sequence. */
function characterBoundary(bytes: Buffer, end: number): number {
  // Continuation bytes are 10xxxxxx: step back over them to the sequence's lead byte.
  let lead = end - 1;
  while (lead > 0 && lead > end - 4 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
  const first = bytes[lead] ?? 0;
  const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return lead + length > end ? lead : end;
}
