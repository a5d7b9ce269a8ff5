/**
 * Files of random `a`/`b` lines: `[ab]*a[ab]{24}$` defeats RE2's DFA on them (linear, but
 * seconds per file), so a Grep over them runs to its time budget. Deterministic: the same
 * seed gives the same bytes.
 *
 * @example
 * const files = abCorpus(8); // 8 files of 125 lines of 8,000 characters (1 MB each)
 */
export function abCorpus(count: number): { name: string; body: string }[] {
  let x = 11;
  const line = () => {
    let s = "";
    for (let i = 0; i < 7_999; i++) {
      x = (Math.imul(x, 1103515245) + 12345) | 0;
      s += (x >>> 16) & 1 ? "a" : "b";
    }
    return `${s}\n`;
  };
  const body = Array.from({ length: 125 }, line).join("");
  return Array.from({ length: count }, (_, i) => ({ name: `ab/f${i}.txt`, body }));
}
