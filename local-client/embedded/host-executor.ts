import { type LocalExecutor, startLocalExecutor } from "../execution/server.ts";

/**
 * The embedded worker's executor: the worker host (and `planport serve`) runs the local
 * executor beside workerd and hands the worker its address and token, so "Approve and run in
 * the cloud" runs the plan's commands in Docker on this machine (docs/EXECUTION.md). Its
 * containers are named after the state folder: the next host on that folder removes what a
 * host killed with `kill -9` left. With `PLANPORT_EXECUTION=overlay`, or an executor given in
 * the vars, none is started.
 *
 * @example
 * const { vars, executor } = await withExecutor(vars, persistDir, sink);
 * // … on stop: await executor?.stop();
 */
export async function withExecutor(
  vars: Record<string, string>,
  stateDir: string,
  log: (line: string) => void,
): Promise<{ vars: Record<string, string>; executor: LocalExecutor | null }> {
  if ((vars.PLANPORT_EXECUTION ?? "").trim() === "overlay") return { vars, executor: null };
  if ((vars.PLANPORT_EXECUTOR_URL ?? "").trim() !== "") return { vars, executor: null };
  const executor = await startLocalExecutor({ stateDir, log: (line) => log(`executor: ${line}`) });
  return {
    vars: { ...vars, PLANPORT_EXECUTOR_URL: executor.url, PLANPORT_EXECUTOR_TOKEN: executor.token },
    executor,
  };
}
