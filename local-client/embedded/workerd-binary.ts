import * as workerdModule from "workerd";

/**
 * The workerd binary of the `workerd` package (Cloudflare's Workers runtime, planport's one
 * runtime dependency). Its entry is CommonJS with `__esModule`: Node's ESM import gives
 * `module.exports` as the default, a bundler the path itself; both are read.
 *
 * @example
 * spawn(workerdBinary(), ["serve", "config.capnp"])
 */
export function workerdBinary(): string {
  const first = (workerdModule as { default?: unknown }).default;
  const path =
    typeof first === "string" ? first : (first as { default?: unknown } | undefined)?.default;
  if (typeof path !== "string") throw new Error("the workerd package names no binary");
  return path;
}
