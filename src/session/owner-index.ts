import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";

export class OwnerIndex extends DurableObject<Env> {}
