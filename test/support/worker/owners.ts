/**
 * Owners with nothing stored yet, named after the test file that uses them: a file that counts
 * what one owner stores takes its own (`token-snapshot-incremental-3`), so no file depends on a
 * counter kept in another. vitest.config.ts configures every token listed here.
 */

/** Each worker test file that needs empty owners, and how many it may take. */
const OWNERS_PER_FILE = {
  "blob-pack-reader": 1,
  "snapshot-incremental": 16,
  "snapshot-long-run": 1,
} as const;

export type OwnerFile = keyof typeof OWNERS_PER_FILE;

function tokenOf(file: OwnerFile, n: number): string {
  return `token-${file}-${n}`;
}

/**
 * Every configured owner token, for the worker's `PLANPORT_TOKENS`.
 *
 * @example
 * ownerTokens() // ["token-snapshot-incremental-0", …, "token-snapshot-long-run-0"]
 */
export function ownerTokens(): string[] {
  return Object.entries(OWNERS_PER_FILE).flatMap(([file, count]) =>
    Array.from({ length: count }, (_, n) => tokenOf(file as OwnerFile, n)),
  );
}

/**
 * Hands out `file`'s owners one after another; a file that asks for more than it has configured
 * is told to add them here, never given another file's.
 *
 * @example
 * const freshOwner = ownersOf("snapshot-incremental");
 * const who = freshOwner(); // { token: "token-snapshot-incremental-0" }
 */
export function ownersOf(file: OwnerFile): () => { token: string } {
  let next = 0;
  return () => {
    if (next >= OWNERS_PER_FILE[file]) {
      throw new Error(
        `${file} used all ${OWNERS_PER_FILE[file]} of its owners: raise its count in test/support/worker/owners.ts`,
      );
    }
    return { token: tokenOf(file, next++) };
  };
}
