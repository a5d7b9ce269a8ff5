/**
 * Hidden text-direction characters: the Unicode bidi embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069). They are invisible and reorder how the text around them is
 * displayed: `rm -rf build/`, U+202E, `gol.*` shows as `rm -rf build/*.log`, which is not what
 * a shell runs (Trojan Source, CVE-2021-42574). Every surface that shows a plan, the review page
 * and the terminal, shows each of them as a visible mark instead, `⟨U+202E⟩`, and says how many
 * the plan holds — as GitHub flags them. One vocabulary for both surfaces, so it lives here.
 */

/** The nine direction controls (a fresh global regex each call: `lastIndex` is state). */
export function directionControlPattern(): RegExp {
  return /[\u202a-\u202e\u2066-\u2069]/g;
}

const NAMES: Readonly<Record<string, string>> = {
  "\u202a": "left-to-right embedding",
  "\u202b": "right-to-left embedding",
  "\u202c": "pop directional formatting",
  "\u202d": "left-to-right override",
  "\u202e": "right-to-left override",
  "\u2066": "left-to-right isolate",
  "\u2067": "right-to-left isolate",
  "\u2068": "first strong isolate",
  "\u2069": "pop directional isolate",
};

/**
 * The visible mark that stands for one direction control.
 *
 * @example
 * directionMark("\u202e") // → "⟨U+202E⟩"
 */
export function directionMark(control: string): string {
  const code = (control.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  return `⟨U+${code}⟩`;
}

/**
 * The text with every direction control replaced by its visible mark.
 *
 * @example
 * showDirectionControls("build/\u202egol.*") // → "build/⟨U+202E⟩gol.*"
 */
export function showDirectionControls(text: string): string {
  return text.replace(directionControlPattern(), directionMark);
}

/**
 * The direction controls in `text`, in order (one entry per occurrence).
 *
 * @example
 * directionControlsIn("a\u202eb\u202c") // → ["\u202e", "\u202c"]
 */
export function directionControlsIn(text: string): string[] {
  return text.match(directionControlPattern()) ?? [];
}

/**
 * The warning a plan holding direction controls gets, above it; null when it holds none.
 * `controls` are the ones its rendering shows ({@link directionControlsIn}).
 *
 * @example
 * directionWarning(["\u202e", "\u202c"])
 * // → "This plan contains 2 hidden text-direction characters, shown as ⟨U+202E⟩ (right-to-left
 * //    override) and ⟨U+202C⟩ (pop directional formatting). …"
 */
export function directionWarning(controls: readonly string[]): string | null {
  if (controls.length === 0) return null;
  const marks = [...new Set(controls)].map((c) => `${directionMark(c)} (${NAMES[c] ?? "unknown"})`);
  const shown =
    marks.length === 1 ? marks[0] : `${marks.slice(0, -1).join(", ")} and ${marks.at(-1)}`;
  const count =
    controls.length === 1
      ? "1 hidden text-direction character"
      : `${controls.length} hidden text-direction characters`;
  return `This plan contains ${count}, shown as ${shown}. They can make text display in another order than a program reads it: check commands and paths near them.`;
}
