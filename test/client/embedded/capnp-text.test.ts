import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { capnpEmbed, capnpString, capnpText } from "../../../local-client/embedded/capnp-text.ts";
import { workerdBinary } from "../../../local-client/embedded/workerd-binary.ts";

describe("Cap'n Proto text", () => {
  it("writes structs, lists, text, integers, booleans and embeds", () => {
    expect(
      capnpText({
        name: "a",
        skipped: undefined,
        list: [1, true, { x: "y" }],
        esModule: capnpEmbed("../w.js"),
      }),
    ).toBe('(name = "a", list = [1, true, (x = "y")], esModule = embed "../w.js")');
  });

  it("escapes quotes, backslashes and every control character, and keeps other characters", () => {
    expect(capnpString('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(capnpString("line\nnext\ttab\r\u001b[31m\u007f")).toBe(
      '"line\\x0anext\\x09tab\\x0d\\x1b[31m\\x7f"',
    );
    expect(capnpString("ünïcödé 🙂 \u202e")).toBe('"ünïcödé 🙂 \u202e"');
  });

  it("refuses what text cannot say: NUL, fractions, field names that are not identifiers", () => {
    expect(() => capnpString("a\0b")).toThrow(/NUL/);
    expect(() => capnpText(1.5)).toThrow(/integer/);
    expect(() => capnpText({ "bad name": 1 })).toThrow(/field/);
    expect(() => capnpText({ Upper: 1 })).toThrow(/field/);
  });

  describe("read back by workerd", () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-capnp-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("a text binding holding every hostile character arrives exactly as given", async () => {
      let hostile = "";
      for (let c = 1; c < 0x80; c++) hostile += String.fromCharCode(c);
      hostile += '"); bindings = [(name = "X", text = "injected")]; #\u202e🙂';
      writeFileSync(
        join(dir, "echo.js"),
        "export default { fetch(_r, env) { return new Response(JSON.stringify(Object.keys(env).sort()) + '\\n' + env.VALUE); } };",
      );
      const config = capnpText({
        services: [
          {
            name: "main",
            worker: {
              modules: [{ name: "echo.js", esModule: capnpEmbed("echo.js") }],
              compatibilityDate: "2026-04-20",
              bindings: [{ name: "VALUE", text: hostile }],
            },
          },
        ],
        sockets: [{ name: "http", address: "127.0.0.1:0", http: {}, service: { name: "main" } }],
      });
      writeFileSync(
        join(dir, "c.capnp"),
        `using Workerd = import "/workerd/workerd.capnp";\nconst config :Workerd.Config = ${config};\n`,
      );
      const child = spawn(workerdBinary(), ["serve", "c.capnp", "--control-fd=3"], {
        cwd: dir,
        stdio: ["ignore", "ignore", "pipe", "pipe"],
      });
      try {
        const [line] = (await once(child.stdio[3] as NodeJS.ReadableStream, "data")) as [Buffer];
        const { port } = JSON.parse(String(line).split("\n")[0] as string) as { port: number };
        const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
        expect(body).toBe(`["VALUE"]\n${hostile}`);
      } finally {
        child.kill("SIGKILL");
      }
    }, 60_000);
  });
});
