/**
 * A deterministic generated repository for scale tests and the offline-planner benchmark:
 * `count` TypeScript files across 40 packages, plus a small auth area whose answer is known
 * (a GitHub OAuth task belongs in packages/auth).
 */

/** A deterministic repository of `count` TypeScript files in packages and modules, with an auth area. */
export function generatedRepository(count: number): Record<string, string> {
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const nouns = [
    "order",
    "invoice",
    "cart",
    "product",
    "price",
    "stock",
    "report",
    "chart",
    "widget",
    "queue",
    "job",
    "metric",
    "cache",
    "search",
    "index",
    "upload",
    "image",
    "comment",
    "review",
    "shipment",
    "coupon",
    "ledger",
    "account",
    "tenant",
    "feature",
    "flag",
    "schedule",
    "webhook",
    "export",
    "import",
  ];
  const verbs = [
    "create",
    "update",
    "load",
    "save",
    "list",
    "remove",
    "render",
    "compute",
    "validate",
    "format",
    "parse",
    "sync",
  ];
  const files: Record<string, string> = {
    "package.json": JSON.stringify(
      {
        name: "generated-monorepo",
        description: "A generated monorepo for benchmarks.",
        scripts: { test: "vitest run", lint: "biome check ." },
      },
      null,
      2,
    ),
    "README.md":
      "# generated-monorepo\n\nA generated monorepo with many packages, used to benchmark the offline planner.\n",
    Makefile: "test:\n\tnpx vitest run\n",
    "packages/auth/src/session.ts":
      "export const SESSION_TTL_MS = 1000;\nexport function createSession(userId: string) {\n  return { userId, expiresAt: Date.now() + SESSION_TTL_MS };\n}\n",
    "packages/auth/src/login.ts":
      'import { createSession } from "./session.js";\nexport async function login(email: string, password: string) {\n  return createSession(email + password);\n}\n',
    "packages/auth/test/login.test.ts":
      'import { login } from "../src/login.js";\ntest("login", async () => { await login("a", "b"); });\n',
  };
  for (let i = Object.keys(files).length; i < count; i++) {
    const pkg = `pkg-${String(i % 40).padStart(2, "0")}`;
    const noun = pick(nouns);
    const mod = `${noun}-${Math.floor(i / 40) % 25}`;
    const isTest = i % 7 === 0;
    const path = `packages/${pkg}/${isTest ? "test" : "src"}/${mod}/${pick(verbs)}-${noun}-${i}${isTest ? ".test" : ""}.ts`;
    const lines: string[] = [
      `import { ${pick(verbs)}${cap(pick(nouns))} } from "../${pick(nouns)}-${i % 25}/index.js";`,
      "",
    ];
    const functions = 4 + Math.floor(random() * 8);
    for (let f = 0; f < functions; f++) {
      const name = `${pick(verbs)}${cap(noun)}${f}`;
      lines.push(
        `/** ${cap(pick(verbs))}s the ${noun} ${pick(nouns)} for the ${pick(nouns)} view. */`,
      );
      lines.push(
        `export function ${name}(input: { id: string; ${pick(nouns)}: number }): number {`,
      );
      for (let l = 0; l < 3 + Math.floor(random() * 6); l++)
        lines.push(
          `  const ${pick(nouns)}${l} = input.${pick(nouns)} ?? ${Math.floor(random() * 100)};`,
        );
      lines.push(`  return ${pick(nouns)}0 + input.id.length;`, "}", "");
    }
    files[path] = lines.join("\n");
  }
  return files;
}

function cap(word: string): string {
  return word[0]!.toUpperCase() + word.slice(1);
}
