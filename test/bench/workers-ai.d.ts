/**
 * The planning engine's port names the Workers AI binding type (`Ai`), which only the Workers
 * types define. Node-side code that runs the engine (the offline-planner benchmark, the
 * in-memory port) never touches the binding; this declares just enough of it for the Node
 * type check. The worker type check does not include this file.
 */
interface Ai {
  run(model: string, inputs: Record<string, unknown>): Promise<unknown>;
}
