/**
 * Which names a unified diff touches, read as `git apply` reads them, and which of them may be
 * written in a local checkout. Pure: `pull --apply` (apply-changes.ts) checks a diff from a
 * remote session with these before git sees it.
 */

/**
 * Paths a unified diff touches (both sides of renames and copies), read as `git apply` reads
 * them: `diff --git` lines, `---`/`+++` headers (one leading directory stripped, as `-p1`),
 * `rename`/`copy from`/`to` lines, C-style quoted names (`"a/caf\303\251.ts"`) decoded. Hunk
 * bodies are skipped by their line counts, so a removed line that reads `-- x` is not a header.
 *
 * @example
 * diffPaths("diff --git a/src/x.ts b/src/x.ts\n--- a/src/x.ts\n+++ b/src/x.ts\n…") // → ["src/x.ts"]
 */
export function diffPaths(diff: string): string[] {
  const paths = new Set<string>();
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of diff.split("\n")) {
    // Inside a hunk; a line no hunk can hold ends it early and is read as a header (git would
    // call the patch corrupt; reading more names than git can only refuse more).
    if ((oldLeft > 0 || newLeft > 0) && /^[ +\-\\]|^$/.test(line)) {
      const kind = line[0];
      if (kind === "-") oldLeft -= 1;
      else if (kind === "+") newLeft -= 1;
      else if (kind !== "\\") {
        oldLeft -= 1;
        newLeft -= 1;
      }
      continue;
    }
    oldLeft = 0;
    newLeft = 0;
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = Number(hunk[1] ?? "1");
      newLeft = Number(hunk[2] ?? "1");
      continue;
    }
    for (const path of headerPaths(line)) paths.add(path);
  }
  return [...paths].sort();
}

function headerPaths(line: string): string[] {
  if (line.startsWith("diff --git ")) return gitHeaderPaths(line.slice("diff --git ".length));
  const side = /^(?:---|\+\+\+) (.*)$/.exec(line);
  if (side?.[1] !== undefined) {
    const name = readName(side[1], true)?.name;
    return name === undefined || name === "/dev/null" ? [] : [stripPrefix(name)];
  }
  const meta = /^(?:rename|copy) (?:from|to) (.*)$/.exec(line);
  if (meta?.[1] !== undefined) {
    const name = readName(meta[1], false)?.name;
    return name === undefined ? [] : [name];
  }
  return [];
}

/**
 * `diff --git <a> <b>`: quoted names are unambiguous. Two unquoted names with spaces are split
 * where both sides name the same file, as git does; a rename's names come from its `rename`
 * lines instead.
 */
function gitHeaderPaths(rest: string): string[] {
  if (rest.startsWith('"')) {
    const first = readName(rest, false);
    if (!first || rest[first.end] !== " ") return [];
    const second = readName(rest.slice(first.end + 1), false);
    return second ? [stripPrefix(first.name), stripPrefix(second.name)] : [stripPrefix(first.name)];
  }
  const quotedSecond = rest.indexOf(' "');
  if (quotedSecond > 0 && rest.endsWith('"')) {
    const second = readName(rest.slice(quotedSecond + 1), false);
    if (second) return [stripPrefix(rest.slice(0, quotedSecond)), stripPrefix(second.name)];
  }
  for (let at = rest.indexOf(" "); at > 0; at = rest.indexOf(" ", at + 1)) {
    const a = stripPrefix(rest.slice(0, at));
    if (a === stripPrefix(rest.slice(at + 1))) return [a];
  }
  return [];
}

/** One leading directory (`a/`, `b/`), as `git apply -p1` strips it. */
function stripPrefix(name: string): string {
  const slash = name.indexOf("/");
  return slash < 0 ? name : name.slice(slash + 1);
}

const C_ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  "\\": 92,
};

/**
 * A name as git writes it: C-quoted (`"…"` with `\t`, `\"`, `\\`, octal `\303\251` bytes of
 * UTF-8) or bare. A bare name on a `---`/`+++` line ends at a tab (a timestamp may follow).
 * Returns the name and where it ended, or null when the quoting is broken.
 */
function readName(text: string, tabEnds: boolean): { name: string; end: number } | null {
  if (!text.startsWith('"')) {
    const tab = tabEnds ? text.indexOf("\t") : -1;
    return { name: tab < 0 ? text : text.slice(0, tab), end: tab < 0 ? text.length : tab };
  }
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 1; i < text.length; i += 1) {
    const ch = text[i] ?? "";
    if (ch === '"') return { name: new TextDecoder().decode(new Uint8Array(bytes)), end: i + 1 };
    if (ch !== "\\") {
      const cp = text.codePointAt(i) ?? 0;
      if (cp > 0xffff) i += 1;
      bytes.push(...encoder.encode(String.fromCodePoint(cp)));
      continue;
    }
    const next = text[i + 1] ?? "";
    const octal = /^[0-3][0-7]{2}/.exec(text.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else if (next in C_ESCAPES) {
      bytes.push(C_ESCAPES[next] ?? 0);
      i += 1;
    } else {
      return null;
    }
  }
  return null;
}

/**
 * The modes a diff sets that are never applied here: 120000 (a symbolic link) and 160000 (a
 * submodule). Remote execution writes regular files only.
 *
 * @example
 * refusedModes("diff --git a/l b/l\nnew file mode 120000\n…") // → ["120000"]
 */
export function refusedModes(diff: string): string[] {
  const modes = new Set<string>();
  const modeLine = /^(?:new file mode|deleted file mode|new mode|old mode|index \S+) (\d{6})$/;
  for (const line of diff.split("\n")) {
    const mode = modeLine.exec(line)?.[1];
    if (mode === "120000" || mode === "160000") modes.add(mode);
  }
  return [...modes];
}
