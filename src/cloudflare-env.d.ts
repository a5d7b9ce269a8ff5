// Tells the Workers types which bindings `env` has and what the main module exports, so
// `import { env, exports } from "cloudflare:workers"` is typed in the worker and its tests.
import type { Env as PlanportEnv } from "./env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends PlanportEnv {}
    interface GlobalProps {
      mainModule: typeof import("./index.ts");
      durableNamespaces: "SessionObject" | "OwnerIndex" | "CommandContainer";
    }
  }
}
