/**
 * Docker's multiplexed exec stream (pure): each frame is an 8-byte header — the stream (1
 * stdout, 2 stderr), three zero bytes, the payload's length as a big-endian uint32 — then the
 * payload. Frames arrive split across chunks in any way.
 *
 * @example
 * const frames = new StreamDemuxer(1 << 20);
 * socket.on("data", (chunk) => frames.push(chunk));
 * frames.stdout() // → Buffer
 */
export class StreamDemuxer {
  private pending: Buffer = Buffer.alloc(0);
  private readonly out: Buffer[] = [];
  private readonly err: Buffer[] = [];
  private size = 0;

  /** `maxBytes`: the most payload kept; past it, {@link push} throws. */
  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 8) {
      const length = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + length) return;
      const kind = this.pending[0];
      const payload = this.pending.subarray(8, 8 + length);
      this.size += length;
      if (this.size > this.maxBytes) {
        throw new Error(`the command runner printed more than ${this.maxBytes} bytes`);
      }
      if (kind === 2) this.err.push(payload);
      else if (kind === 1 || kind === 0) this.out.push(payload);
      else throw new Error(`the Docker exec stream has a frame of unknown kind ${kind}`);
      this.pending = this.pending.subarray(8 + length);
    }
  }

  /** Whether a frame was left half-received. */
  get incomplete(): boolean {
    return this.pending.length > 0;
  }

  stdout(): Buffer {
    return Buffer.concat(this.out);
  }

  stderr(): Buffer {
    return Buffer.concat(this.err);
  }
}
