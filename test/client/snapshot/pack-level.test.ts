import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { openPacker } from "../../../local-client/snapshot/pack.ts";
import {
  isLoopbackUrl,
  LOOPBACK_PACK_LEVEL,
  packLevelFor,
  REMOTE_PACK_LEVEL,
} from "../../../local-client/snapshot/pack-level.ts";

describe("packLevelFor", () => {
  it.each([
    "http://127.0.0.1:8787",
    "http://127.0.0.1:8787/",
    "http://127.5.6.7",
    "http://127.1:9000",
    "http://[::1]:8787",
    "http://localhost:8787",
    "http://LOCALHOST",
    "http://planport.localhost:8787",
  ])("a server on this machine (%s) gets the fast level", (server) => {
    expect(isLoopbackUrl(server)).toBe(true);
    expect(packLevelFor(server)).toBe(LOOPBACK_PACK_LEVEL);
  });

  it.each([
    "https://planport.example.workers.dev",
    "http://127.0.0.1.example.com",
    "http://localhost.example.com",
    "http://128.0.0.1",
    "http://10.0.0.2:8787",
    "http://[::2]:8787",
    "http://192.168.1.5",
    "not a url",
    "",
  ])("any other server (%s) gets gzip's default level", (server) => {
    expect(isLoopbackUrl(server)).toBe(false);
    expect(packLevelFor(server)).toBe(REMOTE_PACK_LEVEL);
  });

  it("the levels are what the comments promise: 6 across a network, faster on loopback", () => {
    expect(REMOTE_PACK_LEVEL).toBe(6);
    expect(LOOPBACK_PACK_LEVEL).toBeLessThan(REMOTE_PACK_LEVEL);
    expect(LOOPBACK_PACK_LEVEL).toBeGreaterThan(0);
  });
});

describe("openPacker's level", () => {
  const files = Array.from({ length: 40 }, (_, i) => ({
    path: `f${i}`,
    content: new TextEncoder().encode(
      `export const value${i} = "${"planport ".repeat(200 + i)}";\n`,
    ),
  }));
  const pack = async (level?: number) => {
    const packer = openPacker(level === undefined ? {} : { level });
    for (const file of files) await packer.add(file);
    return (await packer.finish()).bytes;
  };

  it("any level unpacks to the same tar; the default is level 6's bytes", async () => {
    const fast = await pack(LOOPBACK_PACK_LEVEL);
    const standard = await pack(REMOTE_PACK_LEVEL);
    expect(Buffer.from(gunzipSync(fast))).toEqual(Buffer.from(gunzipSync(standard)));
    expect(Buffer.from(await pack())).toEqual(Buffer.from(standard));
    expect(Buffer.from(fast)).not.toEqual(Buffer.from(standard));
  });
});
