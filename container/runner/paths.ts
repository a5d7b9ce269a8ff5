/**
 * Which paths the runner accepts (pure). A path comes from the worker (the overlay's files) or
 * from a tar's member names; either way it must name a place inside the workspace, and never
 * the place git keeps its own state.
 */

/**
 * Why a workspace-relative path is refused, or undefined when it is fine.
 *
 * @example
 * workspacePathProblem("src/a.ts") // → undefined
 * workspacePathProblem("../etc/passwd") // → "has a .. part"
 */
export function workspacePathProblem(path: string): string | undefined {
  if (path.length === 0) return "is empty";
  if (path.includes("\0")) return "holds a NUL character";
  if (path.startsWith("/")) return "is absolute";
  const parts = path.split("/");
  if (parts.some((part) => part === "..")) return "has a .. part";
  if (parts.some((part) => part === "" || part === ".")) return "has an empty or . part";
  if (parts.some((part) => part.toLowerCase() === ".git")) return "is inside .git";
  return undefined;
}

/**
 * Why a tar member name (as `tar -t` lists it) is refused, or undefined. A leading `./` is how
 * many tar writers name members and is fine; the root `./` itself too.
 *
 * @example
 * tarMemberProblem("./src/a.ts") // → undefined
 * tarMemberProblem("/etc/passwd") // → "is absolute"
 */
export function tarMemberProblem(name: string): string | undefined {
  if (name.startsWith("/")) return "is absolute";
  const parts = name.split("/");
  if (parts.some((part) => part === "..")) return "has a .. part";
  return undefined;
}
