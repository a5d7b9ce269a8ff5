import { OWNER_LABEL_PATTERN } from "../protocol/index.ts";
import { type ConfigVars, oneOf, SettingError } from "./vars.ts";

/** One entry of PLANPORT_TOKENS: `label:token`, or a bare token (label null). */
export interface ConfiguredToken {
  label: string | null;
  token: string;
}

/**
 * The names bare tokens are shown by: 8 hex digits (CONTRACT "Team review": "its label is the
 * first 8 characters of its owner hash"). A configured label may not look like one.
 */
export const BARE_TOKEN_LABEL_PATTERN = /^[0-9a-f]{8}$/;

/**
 * The label of an owner whose token has none: the first 8 characters of its owner hash.
 *
 * @example bareTokenLabel("3f5c1a2b9d…") // "3f5c1a2b"
 */
export function bareTokenLabel(owner: string): string {
  return owner.slice(0, 8);
}

/**
 * PLANPORT_TOKENS (comma-separated; each entry `label:token` or a bare token, split at the
 * first `:`, so a token that itself holds a `:` needs a label) and PLANPORT_REQUIRE_APPROVAL.
 * Labels are 1–32 of a-z, 0-9, `_` and `-`, unique, and never 8 hex digits (the name a bare
 * token is shown by); a token appears once. `other-owner` needs a second token. A message
 * names an entry by its position and never quotes any of it, label included: what reads as a
 * label may be the start of a bare token holding a `:`, and the answer goes to every caller.
 */
export function teamSettings(vars: ConfigVars): {
  tokens: ConfiguredToken[];
  requireApproval: "none" | "other-owner";
} {
  const tokens: ConfiguredToken[] = [];
  /** Where each label and token was first given (1-based positions). */
  const labels = new Map<string, number>();
  const seen = new Map<string, number>();
  const entries = (vars.PLANPORT_TOKENS ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  entries.forEach((entry, index) => {
    const position = index + 1;
    const colon = entry.indexOf(":");
    const label = colon < 0 ? null : entry.slice(0, colon).trim();
    const token = colon < 0 ? entry : entry.slice(colon + 1).trim();
    const where = `entry ${position} of PLANPORT_TOKENS`;
    if (label !== null) {
      if (!OWNER_LABEL_PATTERN.test(label) || BARE_TOKEN_LABEL_PATTERN.test(label)) {
        throw new SettingError(
          `The server's ${where} has a label (the part before its first ":") that is not 1–32 of a-z, 0-9, _ and - (starting with a letter or digit, and not 8 hex digits: those name bare tokens); a token that holds a ":" needs a label in front (label:token). Fix it and restart the worker.`,
        );
      }
      const first = labels.get(label);
      if (first !== undefined) {
        throw new SettingError(
          `The server's ${where} has the same label as entry ${first} of PLANPORT_TOKENS; labels name one owner each, so make them unique and restart the worker.`,
        );
      }
      labels.set(label, position);
    }
    if (token === "") {
      throw new SettingError(
        `The server's ${where} has a label but no token after the ":"; write label:token and restart the worker.`,
      );
    }
    const first = seen.get(token);
    if (first !== undefined) {
      throw new SettingError(
        `The server's ${where} repeats the token of entry ${first}; each token is one owner, so list it once and restart the worker.`,
      );
    }
    seen.set(token, position);
    tokens.push({ label, token });
  });
  const requireApproval = oneOf(vars, "PLANPORT_REQUIRE_APPROVAL", ["none", "other-owner"], "none");
  if (requireApproval === "other-owner" && tokens.length < 2) {
    throw new SettingError(
      "The server's PLANPORT_REQUIRE_APPROVAL is other-owner, but PLANPORT_TOKENS holds fewer than two tokens, so no plan could ever be approved; add a token for the approver (label:token) or set it to none, and restart the worker.",
    );
  }
  return { tokens, requireApproval };
}
