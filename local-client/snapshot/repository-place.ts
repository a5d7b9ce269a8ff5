import { realpathSync } from "node:fs";
import { relative, sep } from "node:path";
import { GitNotFoundError, runGit } from "../git/run.ts";

/**
 * Where a folder sits in its repository. A plan started from `hono/src/middleware` is a plan
 * for the hono repository with `src/middleware` as its area: the snapshot is the whole
 * repository (its manifests, its tests, its verification commands; paths relative to its
 * root, as git and a teleported diff need them), and the folder steers the planner as an
 * `(area: …)` hint. Outside a git work tree the folder is the repository.
 */
export interface RepositoryPlace {
  /** The folder to snapshot: git's top level, or the folder itself outside git. */
  root: string;
  /** The folder's path inside the repository (`src/middleware`); null at the root. */
  area: string | null;
}

/**
 * @example
 * await repositoryPlace("/home/me/hono/src/middleware")
 * // { root: "/home/me/hono", area: "src/middleware" }
 */
export async function repositoryPlace(dir: string): Promise<RepositoryPlace> {
  const top = await gitTopLevel(dir);
  if (top === null) return { root: dir, area: null };
  const inside = relative(realpathSync(top), realpathSync(dir));
  if (inside === "" || inside.startsWith("..")) return { root: top, area: null };
  return { root: top, area: inside.split(sep).join("/") };
}

/**
 * The task with the folder's area as a hint, unless the task already names an area.
 *
 * @example
 * taskWithArea("add a skip option to the logger", "src/middleware")
 * // "add a skip option to the logger (area: src/middleware)"
 */
export function taskWithArea(task: string, area: string | null): string {
  if (area === null || /(^|[\s([;,.])area\s*:/i.test(task)) return task;
  return `${task} (area: ${area})`;
}

/** git's top level for `dir`; null outside a work tree or without git. */
async function gitTopLevel(dir: string): Promise<string | null> {
  try {
    const answer = await runGit(dir, ["rev-parse", "--show-toplevel"]);
    const top = answer.stdout.toString("utf8").trim();
    return answer.status === 0 && top !== "" ? top : null;
  } catch (error) {
    if (error instanceof GitNotFoundError) return null;
    throw error;
  }
}
