/**
 * The plan file's name: two words derived from the session id, stable for the session's life
 * (the model is told the path once and keeps using it), e.g. `/plans/bold-eagle.md`.
 */

const ADJECTIVES = [
  "amber",
  "bold",
  "brisk",
  "calm",
  "clever",
  "crisp",
  "daring",
  "eager",
  "fair",
  "fleet",
  "gentle",
  "glad",
  "golden",
  "grand",
  "keen",
  "kind",
  "lively",
  "lucid",
  "merry",
  "mild",
  "nimble",
  "noble",
  "proud",
  "quick",
  "quiet",
  "rapid",
  "shy",
  "silver",
  "steady",
  "swift",
  "tidy",
  "witty",
] as const;

const NOUNS = [
  "badger",
  "beacon",
  "brook",
  "canyon",
  "cedar",
  "comet",
  "crane",
  "eagle",
  "falcon",
  "fern",
  "fox",
  "harbor",
  "heron",
  "lark",
  "maple",
  "meadow",
  "otter",
  "owl",
  "pine",
  "plover",
  "quarry",
  "raven",
  "reef",
  "ridge",
  "river",
  "robin",
  "sparrow",
  "summit",
  "thicket",
  "tundra",
  "willow",
  "wren",
] as const;

/** Folder of plan files in the virtual workspace, outside the repository tree. */
export const PLANS_DIR = "/plans";

/**
 * The plan file path of a session.
 *
 * @example planPathFor("ses_01jq3v8k2c7x4m9p0a5b6d7e8f") // "/plans/quick-otter.md"
 */
export function planPathFor(sessionId: string): string {
  // FNV-1a: a stable, well-spread hash of the id, enough to pick two words.
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    hash ^= sessionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const adjective = ADJECTIVES[hash % ADJECTIVES.length];
  const noun = NOUNS[Math.floor(hash / ADJECTIVES.length) % NOUNS.length];
  return `${PLANS_DIR}/${adjective}-${noun}.md`;
}
