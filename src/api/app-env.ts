import type { Env } from "../env.ts";
import type { Access } from "../session/result.ts";

/**
 * The Hono app's bindings and request variables: `access` is set on every authenticated route
 * (auth.ts); `owner` and its `label` only where a bearer token is required.
 */
export type AppEnv = {
  Bindings: Env;
  Variables: { access: Access; owner: string; label: string };
};
