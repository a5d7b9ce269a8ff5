/**
 * The set of paths stored so far in one ingest, so that a hostile archive cannot store the
 * same path twice (`duplicate`) or a path that is both a file and a folder (`path_conflict`):
 * the snapshot must read like a real tree. The first entry wins, as it is already in a pack.
 *
 * @example
 * const files = new FileSet();
 * files.admit("src/a.ts"); // null (stored)
 * files.admit("src/a.ts"); // "duplicate"
 * files.admit("src/a.ts/b"); // "path_conflict"
 */
export class FileSet {
  private readonly files = new Set<string>();
  private readonly folders = new Set<string>();

  /** Records `path` and returns null, or returns why it cannot be stored. */
  admit(path: string): "duplicate" | "path_conflict" | null {
    if (this.files.has(path)) return "duplicate";
    if (this.folders.has(path)) return "path_conflict";
    const parents = parentFolders(path);
    if (parents.some((folder) => this.files.has(folder))) return "path_conflict";
    this.files.add(path);
    for (const folder of parents) this.folders.add(folder);
    return null;
  }
}

function parentFolders(path: string): string[] {
  const folders: string[] = [];
  for (let slash = path.indexOf("/"); slash !== -1; slash = path.indexOf("/", slash + 1)) {
    folders.push(path.slice(0, slash));
  }
  return folders;
}
