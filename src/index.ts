import { Hono } from "hono";
import type { Env } from "./env.ts";

export { OwnerIndex } from "./session/owner-index.ts";
export { SessionObject } from "./session/session-object.ts";

const app = new Hono<{ Bindings: Env }>();
app.get("/v1/healthz", (c) => c.json({ ok: true }));

export default app;
