import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";

export class SessionObject extends DurableObject<Env> {
  ping(): number {
    const row = this.ctx.storage.sql.exec("SELECT 41 + 1 AS n").one();
    return Number(row.n);
  }
}
