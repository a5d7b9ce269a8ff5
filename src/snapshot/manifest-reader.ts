import type { z } from "zod";
import {
  MANIFEST_MEMBER_SCHEMAS,
  type ManifestRequest,
  SNAPSHOT_MAX_FILES,
} from "../protocol/index.ts";
import { type IngestFailure, invalidManifest, tooManyFiles } from "./errors.ts";

/**
 * A manifest's JSON read as it arrives (pure: text in, entries out). The document is never held
 * whole: the reader walks the outer object and its lists itself, and hands each entry — one
 * `[path, blob]` pair, one removed path, one skipped entry — to `JSON.parse` and its schema
 * alone, so the limits bite while reading. The 20,001st entry is refused before a character of
 * it is read, whatever follows (a 28 MiB document of 600,000 entries costs what 20,001 cost),
 * and no entry may be longer than {@link MANIFEST_ENTRY_MAX_CHARS}.
 *
 * @example
 * const reader = new ManifestReader();
 * for (const piece of texts) reader.push(piece); // throws IngestFailure at the first problem
 * const manifest = reader.end();
 */
export class ManifestReader {
  private state: State = "start";
  /** Text not yet consumed: the unfinished token (a key or an entry) carried to the next push. */
  private text = "";
  /** Where scanning resumes in `text`. */
  private at = 0;
  /** Characters dropped from the front of `text` so far (for error offsets). */
  private dropped = 0;
  private token: Token | null = null;
  private member: Member | null = null;
  private readonly seen = new Set<Member>();
  private readonly manifest: Partial<ManifestRequest> = {};
  private list: unknown[] = [];

  /** Reads the next piece of the text. Throws an {@link IngestFailure} at the first problem. */
  push(piece: string): void {
    const text = this.text + piece;
    let i = this.at;
    while (i < text.length) {
      if (this.token !== null) {
        i = this.scanToken(text, i);
        continue;
      }
      const c = text.charCodeAt(i);
      if (isWhitespace(c)) i++;
      else i = this.structure(i, c);
    }
    if (this.token === null) {
      this.dropped += text.length;
      this.text = "";
      this.at = 0;
    } else {
      const start = this.token.start;
      this.dropped += start;
      this.text = text.slice(start);
      this.at = i - start;
      this.token.start = 0;
    }
  }

  /** The manifest, once the whole text was pushed. */
  end(): ManifestRequest {
    if (this.state === "start" && this.token === null) {
      throw invalidManifest("The manifest is empty; send the tree's manifest as a JSON object.");
    }
    if (this.state !== "done") {
      throw invalidManifest("The manifest is not valid JSON (it ends before its closing brace).");
    }
    for (const member of ["id", "files", "skipped"] as const) {
      if (!this.seen.has(member)) throw invalidManifest(`Invalid manifest: ${member}: missing.`);
    }
    return this.manifest as ManifestRequest;
  }

  /** One character between tokens: the object's braces, colons and commas, a list's brackets. */
  private structure(i: number, c: number): number {
    switch (this.state) {
      case "start":
        if (c !== OPEN_BRACE) throw notJson(this.offset(i), "a manifest is a JSON object");
        this.state = "first-key";
        return i + 1;
      case "first-key":
        if (c === CLOSE_BRACE) {
          this.state = "done";
          return i + 1;
        }
        return this.startKey(i, c);
      case "key":
        return this.startKey(i, c);
      case "colon":
        if (c !== COLON) throw notJson(this.offset(i), "expected ':' after a member name");
        this.state = "value";
        return i + 1;
      case "value":
        if (c === OPEN_BRACKET && isList(this.member)) {
          this.list = [];
          this.state = "first-element";
          return i + 1;
        }
        return this.startValue(i, c);
      case "first-element":
        if (c === CLOSE_BRACKET) return this.endList(i);
        return this.startElement(i, c);
      case "element":
        return this.startElement(i, c);
      case "after-element":
        if (c === COMMA) this.state = "element";
        else if (c === CLOSE_BRACKET) return this.endList(i);
        else throw notJson(this.offset(i), "expected ',' or ']' after an entry");
        return i + 1;
      case "after-member":
        if (c === COMMA) this.state = "key";
        else if (c === CLOSE_BRACE) this.state = "done";
        else throw notJson(this.offset(i), "expected ',' or '}' after a member");
        return i + 1;
      case "done":
        throw notJson(this.offset(i), "text after the manifest's closing brace");
    }
  }

  private startKey(i: number, c: number): number {
    if (c !== QUOTE) throw notJson(this.offset(i), "expected a member name in double quotes");
    this.token = { kind: "string", start: i, nest: 0, inString: false, escaped: false };
    return i + 1;
  }

  private startElement(i: number, c: number): number {
    const entries = (this.manifest.files?.length ?? 0) + (this.manifest.skipped?.length ?? 0);
    if (this.member === "removed") {
      if (this.list.length >= SNAPSHOT_MAX_FILES) {
        throw invalidManifest(
          `removed: more than ${SNAPSHOT_MAX_FILES.toLocaleString("en-US")} paths; no snapshot has that many files to remove.`,
        );
      }
    } else if (entries + this.list.length >= SNAPSHOT_MAX_FILES) throw tooManyFiles();
    return this.startValue(i, c);
  }

  /** A value whose text is handed to `JSON.parse` whole: a member's value or a list's entry. */
  private startValue(i: number, c: number): number {
    let kind: Token["kind"];
    if (c === QUOTE) kind = "string";
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) kind = "nested";
    else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9) || LITERAL_STARTS.has(c))
      kind = "literal";
    else throw notJson(this.offset(i), `unexpected ${JSON.stringify(String.fromCharCode(c))}`);
    this.token = {
      kind,
      start: i,
      nest: kind === "nested" ? 1 : 0,
      inString: false,
      escaped: false,
    };
    return i + 1;
  }

  /** Scans on through the current token; finishes it when it ends in `text`. */
  private scanToken(text: string, from: number): number {
    const token = this.token as Token;
    let i = from;
    let end = -1;
    if (token.kind === "literal") {
      for (; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === COMMA || c === CLOSE_BRACKET || c === CLOSE_BRACE || isWhitespace(c)) {
          end = i;
          break;
        }
      }
    } else {
      // A string, or an array or object with strings inside; only brackets outside strings nest.
      let { nest, inString, escaped } = token;
      if (token.kind === "string") inString = true;
      for (; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (escaped) escaped = false;
        else if (inString) {
          if (c === BACKSLASH) escaped = true;
          else if (c === QUOTE) {
            inString = false;
            if (nest === 0) {
              end = i + 1;
              break;
            }
          }
        } else if (c === QUOTE) inString = true;
        else if (c === OPEN_BRACE || c === OPEN_BRACKET) nest++;
        else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
          nest--;
          if (nest === 0) {
            end = i + 1;
            break;
          }
        }
      }
      Object.assign(token, { nest, inString, escaped });
    }
    const length = (end === -1 ? text.length : end) - token.start;
    if (length > MANIFEST_ENTRY_MAX_CHARS) throw this.tooLong();
    if (end === -1) return text.length;
    this.token = null;
    this.finish(text.slice(token.start, end));
    // A literal ends at the character after it, which the structure reads next.
    return end;
  }

  private finish(raw: string): void {
    if (this.state === "key" || this.state === "first-key") {
      this.takeKey(parse(raw, "a member name") as string);
      this.state = "colon";
      return;
    }
    const member = this.member as Member;
    if (this.state === "value") {
      if (isList(member))
        throw invalidManifest(`Invalid manifest: ${member}: expected a list in square brackets.`);
      const value = checked(member, member, parse(raw, member));
      (this.manifest as Record<string, unknown>)[member] = value;
      this.state = "after-member";
      return;
    }
    const where = `${member}[${this.list.length}]`;
    this.list.push(checked(member, where, parse(raw, where)));
    this.state = "after-element";
  }

  private takeKey(key: string): void {
    if (!Object.hasOwn(MANIFEST_MEMBER_SCHEMAS, key)) {
      throw invalidManifest(
        `Invalid manifest: body: unrecognized member ${JSON.stringify(key.slice(0, 60))} (a manifest has id, base, files, removed and skipped).`,
      );
    }
    const member = key as Member;
    if (this.seen.has(member)) throw invalidManifest(`Invalid manifest: ${member} appears twice.`);
    this.seen.add(member);
    this.member = member;
  }

  private endList(i: number): number {
    const member = this.member as "files" | "removed" | "skipped";
    (this.manifest as Record<string, unknown>)[member] = this.list;
    this.list = [];
    this.state = "after-member";
    return i + 1;
  }

  private tooLong(): IngestFailure {
    const where =
      this.state === "element" || this.state === "first-element"
        ? `${this.member}[${this.list.length}]`
        : this.state === "value"
          ? this.member
          : "a member name";
    return invalidManifest(
      `Invalid manifest: ${where}: longer than ${MANIFEST_ENTRY_MAX_CHARS} characters of JSON; no path is that long.`,
    );
  }

  private offset(i: number): number {
    return this.dropped + i;
  }
}

/**
 * Longest JSON text of one entry or member value. A stored path is at most 1,024 UTF-8 bytes,
 * so at most 1,024 characters, each at most 6 when escaped (`\u00e9`): a [path, blob] pair stays
 * under 6,200.
 */
export const MANIFEST_ENTRY_MAX_CHARS = 8 * 1024;

type Member = keyof typeof MANIFEST_MEMBER_SCHEMAS;

type State =
  | "start"
  | "first-key"
  | "key"
  | "colon"
  | "value"
  | "first-element"
  | "element"
  | "after-element"
  | "after-member"
  | "done";

interface Token {
  kind: "string" | "nested" | "literal";
  start: number;
  nest: number;
  inString: boolean;
  escaped: boolean;
}

function isList(member: Member | null): member is "files" | "removed" | "skipped" {
  return member === "files" || member === "removed" || member === "skipped";
}

function parse(raw: string, where: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (cause) {
    throw invalidManifest(
      `Invalid manifest: ${where} is not valid JSON (${(cause as Error).message}).`,
    );
  }
}

function checked(member: Member, where: string, value: unknown): unknown {
  const schema: z.ZodType = MANIFEST_MEMBER_SCHEMAS[member];
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const inside = issue?.path.length ? `.${issue.path.map(String).join(".")}` : "";
  throw invalidManifest(`Invalid manifest: ${where}${inside}: ${issue?.message ?? "wrong shape"}.`);
}

function notJson(offset: number, what: string): IngestFailure {
  return invalidManifest(`The manifest is not valid JSON (${what}, at character ${offset}).`);
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
/** `t`, `f` and `n`: true, false and null. */
const LITERAL_STARTS = new Set([0x74, 0x66, 0x6e]);
