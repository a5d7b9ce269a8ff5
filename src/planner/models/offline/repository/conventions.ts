import { dirOf, extensionOf, fileStem, languageOf, pathKind } from "./paths.ts";

/**
 * The repository's own conventions for new files, read from the files beside them. Pure.
 * A numbered migrations folder gets the next number in its own width and separator
 * (`003_linked_identities.sql` after `002_invoices.sql`); a new file in a folder of similar
 * files is named the way they are (kebab-case, snake_case, camelCase or PascalCase).
 */

/** A numbered migrations folder and how its files are named. */
export interface MigrationFolder {
  dir: string;
  /** The numbered files, in number order. */
  files: string[];
  /** Digits of the number (3 for `002_…`); 0 when the numbers are not padded. */
  width: number;
  /** What follows the number: `_`, `-` or `.`. */
  separator: string;
  extension: string;
  next: number;
  /** Timestamps rather than counters (`20240101120000_…`). */
  timestamps: boolean;
}

const MIGRATION_DIR = /(^|\/)(migrations?|migrate|alembic|versions|schema|db|sql)(\/|$)/i;
const NUMBERED = /^(\d+)([_.-])(.+)$/;

/**
 * Numbered migrations folders among `paths`, the most files first: a folder named like one
 * (`migrations/`, `db/migrate/`, `alembic/versions/`) holding at least two numbered files.
 *
 * @example
 * migrationFolders(["migrations/001_users.sql", "migrations/002_invoices.sql"])[0]!.next // 3
 */
export function migrationFolders(paths: Iterable<string>): MigrationFolder[] {
  const byDir = new Map<string, string[]>();
  for (const path of paths) {
    const dir = dirOf(path);
    if (!MIGRATION_DIR.test(dir)) continue;
    const kind = pathKind(path);
    if (kind !== "source" && kind !== "config" && kind !== "other") continue;
    const name = path.slice(dir.length + (dir === "" ? 0 : 1));
    if (!NUMBERED.test(name)) continue;
    const list = byDir.get(dir) ?? [];
    list.push(path);
    byDir.set(dir, list);
  }
  const folders: MigrationFolder[] = [];
  for (const [dir, files] of byDir) {
    if (files.length < 2) continue;
    const parsed = files.map((p) => {
      const m = NUMBERED.exec(p.slice(dir.length + (dir === "" ? 0 : 1)))!;
      return { path: p, digits: m[1]!, separator: m[2]! };
    });
    parsed.sort((a, b) => Number(a.digits) - Number(b.digits) || (a.path < b.path ? -1 : 1));
    const last = parsed[parsed.length - 1]!;
    const timestamps = last.digits.length >= 12;
    const padded = parsed.every((p) => p.digits.length === last.digits.length);
    folders.push({
      dir,
      files: parsed.map((p) => p.path),
      width: padded ? last.digits.length : 0,
      separator: last.separator,
      extension: extensionOf(last.path),
      next: Number(last.digits) + 1,
      timestamps,
    });
  }
  return folders.sort((a, b) => b.files.length - a.files.length || (a.dir < b.dir ? -1 : 1));
}

/**
 * The path of the next migration in `folder`, named with `words` in the folder's style.
 *
 * @example
 * nextMigrationPath(folder, ["linked", "identities"]) // "migrations/003_linked_identities.sql"
 */
export function nextMigrationPath(folder: MigrationFolder, words: readonly string[]): string {
  const last = folder.files[folder.files.length - 1]!;
  const lastName = last.slice(last.lastIndexOf("/") + 1);
  const rest = NUMBERED.exec(lastName)?.[3] ?? "";
  const style = nameStyle([rest.replace(/\.[^.]+$/, "")]);
  // A one-word name shows no style: the separator after the number does.
  const kebab = style === "kebab" || (style === "flat" && folder.separator === "-");
  const slug = joinWords(words.length > 0 ? words : ["change"], kebab ? "kebab" : "snake");
  const number = folder.timestamps
    ? "YYYYMMDDHHMMSS"
    : String(folder.next).padStart(folder.width, "0");
  const prefix = folder.dir === "" ? "" : `${folder.dir}/`;
  return `${prefix}${number}${folder.separator}${slug}${folder.extension}`;
}

export type NameStyle = "kebab" | "snake" | "camel" | "pascal" | "flat";

/**
 * How the names in a folder are written, by majority.
 *
 * @example
 * nameStyle(["user-store", "session-cache", "login"]) // "kebab"
 */
export function nameStyle(stems: readonly string[]): NameStyle {
  const counts: Record<NameStyle, number> = { kebab: 0, snake: 0, camel: 0, pascal: 0, flat: 0 };
  for (const s of stems) {
    if (s.includes("-")) counts.kebab++;
    else if (s.includes("_")) counts.snake++;
    else if (/^[A-Z][a-z0-9]+[A-Z]/.test(s) || /^[A-Z][a-z0-9]+$/.test(s)) counts.pascal++;
    else if (/^[a-z][a-z0-9]*[A-Z]/.test(s)) counts.camel++;
    else counts.flat++;
  }
  const order: NameStyle[] = ["kebab", "snake", "pascal", "camel"];
  const best = order.reduce((a, b) => (counts[b] > counts[a] ? b : a), "kebab" as NameStyle);
  return counts[best] > 0 ? best : "flat";
}

/**
 * Words joined in a naming style.
 *
 * @example
 * joinWords(["github", "oauth"], "kebab") // "github-oauth"
 * joinWords(["github", "oauth"], "pascal") // "GithubOauth"
 */
export function joinWords(words: readonly string[], style: NameStyle): string {
  const lower = words.map((w) => w.toLowerCase());
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  switch (style) {
    case "snake":
      return lower.join("_");
    case "camel":
      return lower.map((w, i) => (i === 0 ? w : cap(w))).join("");
    case "pascal":
      return lower.map(cap).join("");
    case "flat":
    case "kebab":
      return lower.join("-");
  }
}

/**
 * The name of a new file in `dir` beside `siblings` (paths in that folder), made of `words`,
 * with the siblings' extension and naming style; a language's own rule where the folder
 * does not show one (Python, Ruby, Rust and Go files are snake_case, Java classes PascalCase).
 *
 * @example
 * newFilePath("src/routes", ["src/routes/login.js", "src/routes/billing.js"], ["github", "oauth"]) // "src/routes/github-oauth.js"
 */
export function newFilePath(
  dir: string,
  siblings: readonly string[],
  words: readonly string[],
): string {
  const same = siblings.filter((p) => dirOf(p) === dir && pathKind(p) === "source");
  const extension = mostCommon(same.map(extensionOf)) ?? ".ts";
  const language = languageOf(`x${extension}`);
  let style = nameStyle(
    same.map(fileStem).filter((s) => !/^(index|mod|__init__|main|lib)$/.test(s)),
  );
  if (style === "flat" || style === "kebab") {
    if (language === "py" || language === "rb" || language === "rs" || language === "go")
      style = "snake";
    else if (language === "java") style = "pascal";
  }
  const prefix = dir === "" ? "" : `${dir}/`;
  return `${prefix}${joinWords(words, style)}${extension}`;
}

function mostCommon(values: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  for (const [v, n] of counts)
    if (best === null || n > counts.get(best)! || (n === counts.get(best)! && v < best)) best = v;
  return best;
}
