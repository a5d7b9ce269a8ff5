/**
 * What a repository's manifests say: its name and description, and the commands that verify a
 * change (package scripts, Makefile targets, pytest, go test, cargo test). Pure: texts in,
 * facts out.
 */

/** Top-level files the offline planner reads first. */
export const MANIFEST_NAMES = [
  "package.json",
  "pyproject.toml",
  "setup.py",
  "setup.cfg",
  "requirements.txt",
  "tox.ini",
  "pytest.ini",
  "Cargo.toml",
  "go.mod",
  "Makefile",
  "makefile",
  "GNUmakefile",
  "deno.json",
] as const;

/** README spellings, in order of preference. */
export const README_NAMES = [
  "README.md",
  "README.markdown",
  "README.rst",
  "README.txt",
  "README",
  "readme.md",
  "Readme.md",
];

export interface VerificationCommand {
  command: string;
  /** Where it came from, e.g. `package.json script "test": vitest run`. */
  source: string;
}

export interface ProjectFacts {
  name: string | null;
  description: string | null;
  /** Languages/ecosystems seen, e.g. ["Node.js", "Python"]. */
  ecosystems: string[];
  commands: VerificationCommand[];
}

/** Script names worth running to verify a change, in the order they are listed. */
const PACKAGE_SCRIPTS = [
  "test",
  "test:unit",
  "test:integration",
  "test:e2e",
  "typecheck",
  "check",
  "lint",
  "build",
];
const MAKE_TARGET = /^(test|tests|check|lint|verify|typecheck|ci)$/;

/**
 * Reads the facts from manifest texts (by file name) and the names at the repository root
 * (for lock files and a `tests/` folder).
 *
 * @example
 * projectFacts({ "package.json": '{"name":"shop","scripts":{"test":"vitest run"}}' }, ["package.json"])
 * // { name: "shop", …, commands: [{ command: "npm test", source: 'package.json script "test": vitest run' }] }
 */
export function projectFacts(
  manifests: Readonly<Record<string, string>>,
  rootNames: readonly string[],
): ProjectFacts {
  const facts: ProjectFacts = { name: null, description: null, ecosystems: [], commands: [] };
  const root = new Set(rootNames);
  const hasTestsDir = root.has("tests/") || root.has("test/");

  const pkg = manifests["package.json"];
  if (pkg !== undefined) {
    facts.ecosystems.push("Node.js");
    const json = parseJson(pkg);
    facts.name ??= stringField(json, "name");
    facts.description ??= stringField(json, "description");
    const runner = root.has("pnpm-lock.yaml")
      ? "pnpm"
      : root.has("yarn.lock")
        ? "yarn"
        : root.has("bun.lockb") || root.has("bun.lock")
          ? "bun"
          : "npm";
    const scripts =
      json && typeof json === "object" && "scripts" in json
        ? (json as { scripts: unknown }).scripts
        : null;
    if (scripts && typeof scripts === "object") {
      for (const name of PACKAGE_SCRIPTS) {
        const body = (scripts as Record<string, unknown>)[name];
        if (typeof body !== "string") continue;
        const command = name === "test" && runner === "npm" ? "npm test" : `${runner} run ${name}`;
        facts.commands.push({ command, source: `package.json script "${name}": ${body}` });
      }
    }
  }

  const pyproject = manifests["pyproject.toml"];
  const pythonish =
    pyproject ?? manifests["setup.py"] ?? manifests["setup.cfg"] ?? manifests["requirements.txt"];
  if (pythonish !== undefined) {
    facts.ecosystems.push("Python");
    if (pyproject !== undefined) {
      facts.name ??=
        tomlString(pyproject, "project", "name") ?? tomlString(pyproject, "tool.poetry", "name");
      facts.description ??=
        tomlString(pyproject, "project", "description") ??
        tomlString(pyproject, "tool.poetry", "description");
    }
    const allPython = [
      pyproject,
      manifests["setup.cfg"],
      manifests["requirements.txt"],
      manifests["tox.ini"],
      manifests["pytest.ini"],
    ].join("\n");
    if (/pytest/i.test(allPython) || hasTestsDir || manifests["pytest.ini"] !== undefined) {
      facts.commands.push({
        command: "pytest",
        source:
          manifests["pytest.ini"] !== undefined
            ? "pytest.ini"
            : "pytest in the Python project configuration",
      });
    }
    if (manifests["tox.ini"] !== undefined)
      facts.commands.push({ command: "tox", source: "tox.ini" });
    if (pyproject !== undefined && /^\[tool\.ruff/m.test(pyproject))
      facts.commands.push({ command: "ruff check .", source: "pyproject.toml [tool.ruff]" });
    if (pyproject !== undefined && /^\[tool\.mypy/m.test(pyproject))
      facts.commands.push({ command: "mypy .", source: "pyproject.toml [tool.mypy]" });
  }

  const gomod = manifests["go.mod"];
  if (gomod !== undefined) {
    facts.ecosystems.push("Go");
    facts.name ??= /^module\s+(\S+)/m.exec(gomod)?.[1] ?? null;
    facts.commands.push(
      { command: "go test ./...", source: "go.mod" },
      { command: "go vet ./...", source: "go.mod" },
    );
  }

  const cargo = manifests["Cargo.toml"];
  if (cargo !== undefined) {
    facts.ecosystems.push("Rust");
    facts.name ??= tomlString(cargo, "package", "name");
    facts.description ??= tomlString(cargo, "package", "description");
    facts.commands.push({ command: "cargo test", source: "Cargo.toml" });
    if (/^\[workspace\]/m.test(cargo))
      facts.commands.push({ command: "cargo test --workspace", source: "Cargo.toml [workspace]" });
  }

  const deno = manifests["deno.json"];
  if (deno !== undefined) {
    facts.ecosystems.push("Deno");
    const tasks = (parseJson(deno) as { tasks?: Record<string, unknown> } | null)?.tasks ?? {};
    for (const name of PACKAGE_SCRIPTS)
      if (typeof tasks[name] === "string")
        facts.commands.push({ command: `deno task ${name}`, source: `deno.json task "${name}"` });
    if (!("test" in tasks)) facts.commands.push({ command: "deno test", source: "deno.json" });
  }

  const makefile = manifests.Makefile ?? manifests.makefile ?? manifests.GNUmakefile;
  if (makefile !== undefined) {
    for (const target of makeTargets(makefile)) {
      if (MAKE_TARGET.test(target))
        facts.commands.push({ command: `make ${target}`, source: "Makefile target" });
    }
  }
  return facts;
}

/**
 * Targets a Makefile defines (not variables, not pattern rules).
 *
 * @example
 * makeTargets("test:\n\tgo test ./...\n") // ["test"]
 */
export function makeTargets(makefile: string): string[] {
  const targets: string[] = [];
  for (const match of makefile.matchAll(/^([A-Za-z0-9_.-]+)\s*:(?!=)/gm)) {
    const name = match[1]!;
    if (!name.startsWith(".") && !targets.includes(name)) targets.push(name);
  }
  return targets;
}

/**
 * The first prose paragraph of a README (headings, badges and code skipped), shortened.
 *
 * @example
 * readmeSummary("# Shop\n\n[![ci](x)](y)\n\nA tiny shop.\nIt sells things.") // "A tiny shop. It sells things."
 */
export function readmeSummary(readme: string, maxChars = 300): string | null {
  let inFence = false;
  for (const block of readme.split(/\n\s*\n/)) {
    const trimmed = block.trim();
    const fences = (trimmed.match(/^```/gm) ?? []).length;
    const wasInFence = inFence;
    if (fences % 2 === 1) inFence = !inFence;
    if (wasInFence || fences > 0) continue;
    if (trimmed === "" || /^(#|=|-{3,}|\[!\[|!\[|<)/.test(trimmed)) continue;
    const text = trimmed.replace(/\s+/g, " ");
    return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
  }
  return null;
}

/**
 * A manifest's JSON; when it does not parse whole (cut by Read's limit, or a stray comma), its
 * top-level `name`, `description`, `scripts` and `tasks` members as far as they can be read.
 */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return topLevelMembers(text, ["name", "description", "scripts", "tasks"]);
  }
}

/**
 * The members `keys` of a JSON object's top level that parse on their own, read by scanning
 * the text (strings and nesting tracked), so the rest of the document may be cut or broken.
 *
 * @example
 * topLevelMembers('{"name":"hono","scripts":{"test":"vitest"},"exports":{"./a', ["name", "scripts"])
 * // { name: "hono", scripts: { test: "vitest" } }
 */
export function topLevelMembers(
  text: string,
  keys: readonly string[],
): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  const start = text.indexOf("{");
  if (start === -1) return null;
  let depth = 0;
  let i = start;
  let found = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"') {
      const end = stringEnd(text, i);
      if (end === -1) break;
      if (depth === 1) {
        const key = safeParse(text.slice(i, end + 1));
        const colon = /^\s*:\s*/.exec(text.slice(end + 1, end + 64));
        if (typeof key === "string" && colon !== null && keys.includes(key)) {
          const valueStart = end + 1 + colon[0].length;
          const valueEnd = valueEndOf(text, valueStart);
          if (valueEnd === -1) break;
          const value = safeParse(text.slice(valueStart, valueEnd));
          if (value !== undefined) {
            out[key] = value;
            found = true;
          }
          i = valueEnd;
          continue;
        }
      }
      i = end + 1;
      continue;
    }
    if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") depth--;
    i++;
  }
  return found ? out : null;
}

/** Index of the quote that closes the string opening at `at`, or -1. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** Index just past the JSON value starting at `at` (string, object, array or scalar), or -1. */
function valueEndOf(text: string, at: number): number {
  const first = text[at];
  if (first === '"') {
    const end = stringEnd(text, at);
    return end === -1 ? -1 : end + 1;
  }
  if (first === "{" || first === "[") {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '"') {
        const end = stringEnd(text, i);
        if (end === -1) return -1;
        i = end;
      } else if (ch === "{" || ch === "[") depth++;
      else if (ch === "}" || ch === "]") {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  const m = /^[^,}\]\s]+/.exec(text.slice(at, at + 64));
  return m === null ? -1 : at + m[0].length;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function stringField(json: unknown, key: string): string | null {
  if (json && typeof json === "object" && key in json) {
    const value = (json as Record<string, unknown>)[key];
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return null;
}

/** A `key = "value"` string inside `[section]` of a TOML file (enough for names and descriptions). */
function tomlString(toml: string, section: string, key: string): string | null {
  let current = "";
  for (const line of toml.split("\n")) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header) {
      current = header[1]!.trim();
      continue;
    }
    if (current !== section) continue;
    const pair = new RegExp(`^\\s*${key.replace(/\./g, "\\.")}\\s*=\\s*["']([^"']*)["']`).exec(
      line,
    );
    if (pair) return pair[1]!;
  }
  return null;
}
