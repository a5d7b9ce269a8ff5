/**
 * The configuration git would apply in a folder, read as data: the output of
 * `git config --list --null --show-scope --show-origin`, which reads every file git reads
 * (includes and `includeIf` followed, as git follows them) and executes nothing. Pure.
 */

/** One configuration entry, in the order git reads them (a later one wins). */
export interface ConfigEntry {
  /** git's scope: `system`, `global`, `local`, `worktree`, `command`, or another word. */
  scope: string;
  /** Where it was read (`file:.git/config`, `file:.git/extra.config` for an include…). */
  origin: string;
  /** The key as git prints it: section and name lowercased, a subsection as written. */
  key: string;
  /** null for a key written without `=` (a boolean true). */
  value: string | null;
}

/**
 * The scopes the user chose: their system and global files and what the command line (or
 * `GIT_CONFIG_*` in the environment) says. Everything else — the repository's `.git/config`,
 * `config.worktree`, and whatever they include — came with the repository.
 */
const USER_SCOPES: ReadonlySet<string> = new Set(["system", "global", "command"]);

/**
 * @example
 * parseConfigListing("local\0file:.git/config\0core.fsmonitor\n./watch\0")
 * // [{ scope: "local", origin: "file:.git/config", key: "core.fsmonitor", value: "./watch" }]
 */
export function parseConfigListing(output: string): ConfigEntry[] {
  const fields = output.split("\0");
  const entries: ConfigEntry[] = [];
  // Each entry is three fields: scope, origin, then the key and (after a line feed) its value.
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const pair = fields[i + 2] as string;
    const newline = pair.indexOf("\n");
    entries.push({
      scope: fields[i] as string,
      origin: fields[i + 1] as string,
      key: newline === -1 ? pair : pair.slice(0, newline),
      value: newline === -1 ? null : pair.slice(newline + 1),
    });
  }
  return entries;
}

/**
 * True for an entry that came with the repository rather than from the user. Fails closed: a
 * scope git may name in the future counts as the repository's.
 *
 * @example
 * cameWithRepository({ scope: "local", origin: "file:.git/config", key: "core.editor", value: "x" }) // true
 */
export function cameWithRepository(entry: ConfigEntry): boolean {
  return !USER_SCOPES.has(entry.scope);
}

/** A key split the way git splits it: `filter.a.b.clean` → `filter`, `a.b`, `clean`. */
export interface ConfigKeyParts {
  section: string;
  /** null when the key has no subsection (`core.editor`). */
  subsection: string | null;
  name: string;
}

/**
 * Sections and names never contain a dot; a subsection may, so it is everything between the
 * first and the last one.
 *
 * @example
 * configKeyParts("merge.ours.theirs.driver") // { section: "merge", subsection: "ours.theirs", name: "driver" }
 */
export function configKeyParts(key: string): ConfigKeyParts {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  if (first === -1) return { section: key.toLowerCase(), subsection: null, name: "" };
  return {
    section: key.slice(0, first).toLowerCase(),
    subsection: first === last ? null : key.slice(first + 1, last),
    name: key.slice(last + 1).toLowerCase(),
  };
}
