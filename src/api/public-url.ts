import type { Context } from "hono";
import { configOf } from "../config.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Where the worker's links point (review links carry their key, so they must never point at a
 * host an attacker chose). `PLANPORT_PUBLIC_URL`, when set, wins: behind a proxy that passes
 * `Host` through unchecked, a forged Host would otherwise yield a review link to another host.
 * Without it, links use the origin this request reached the worker on, which is right for
 * `wrangler dev`, the embedded worker and a plain `*.workers.dev` deployment.
 *
 * @example
 * linkBase(c) // "https://planport.example.com" (PLANPORT_PUBLIC_URL) or "http://127.0.0.1:8787"
 */
export function linkBase(c: Context<AppEnv>): string {
  return configOf(c.env).publicUrl ?? new URL(c.req.url).origin;
}
