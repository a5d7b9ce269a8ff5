import { z } from "zod";

/**
 * The most bytes a JSON text that a schema accepts can have, read from the schema's JSON
 * Schema (`z.toJSONSchema`): every string's `maxLength`, every array's `maxItems`, every
 * record's `maxProperties`. A part with no maximum is an error that names it — a body limit
 * cannot be derived from a schema that lets a field grow without end. Pure.
 *
 * What a character costs: free text up to {@link JSON_BYTES_PER_TEXT_CHAR} bytes (a control
 * character is `\u0001`; a client may escape any character so, as Python's `json.dumps` does
 * every non-ASCII one by default — a plan in Chinese sent from Python is 6 bytes a character).
 * A string whose pattern admits only ASCII letters, digits and punctuation (ids, names) costs
 * 1 byte a character: no JSON encoder escapes those.
 */

/** The most bytes one character of free text takes in JSON: `\u0001`, `\u4e2d`. */
export const JSON_BYTES_PER_TEXT_CHAR = 6;

/**
 * Whitespace allowed before every value and member: a line break and indentation, as a
 * pretty-printed body has (7 levels deep at 2 spaces).
 */
export const WHITESPACE_PER_VALUE = 16;

/** The longest spelling of a JavaScript number (`-1.2345678901234567e-308`). */
const NUMBER_BYTES = 24;

/**
 * A schema's own declaration for the size limit: the strings inside hold at most this many
 * characters together (set with `.meta()` beside a `.refine()` that enforces it).
 */
const MAX_TEXT_CHARS = "maxTextChars";

/**
 * The most bytes a JSON text accepted by `schema` can have (whitespace included, up to
 * {@link WHITESPACE_PER_VALUE} before each value); throws for a schema with an unbounded part.
 *
 * @example
 * jsonBytesAtMost(z.object({ text: z.string().max(10) })) // 2 + 16 + 6 + 1 + (2 + 6·10)
 */
export function jsonBytesAtMost(schema: z.ZodType): number {
  const root = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  const size = sizeOf(root as JsonSchema, "body");
  return size.bytes + JSON_BYTES_PER_TEXT_CHAR * size.textChars;
}

type JsonSchema = { [keyword: string]: unknown };

/** Bytes of everything but free text, and the characters of free text (each ≤ 6 bytes). */
interface Size {
  bytes: number;
  textChars: number;
}

function sizeOf(node: JsonSchema, where: string): Size {
  const size = measure(node, where);
  const cap = node[MAX_TEXT_CHARS];
  return typeof cap === "number" ? { ...size, textChars: Math.min(size.textChars, cap) } : size;
}

function measure(node: JsonSchema, where: string): Size {
  const branches = node.anyOf ?? node.oneOf;
  if (Array.isArray(branches)) {
    return largest(branches.map((branch) => sizeOf(branch as JsonSchema, where)));
  }
  if ("const" in node) return { bytes: literalBytes(node.const), textChars: 0 };
  if (Array.isArray(node.enum)) {
    return { bytes: Math.max(...node.enum.map(literalBytes)), textChars: 0 };
  }
  switch (node.type) {
    case "string":
      return stringSize(node, where);
    case "integer":
    case "number":
      return { bytes: numberBytes(node), textChars: 0 };
    case "boolean":
      return { bytes: "false".length, textChars: 0 };
    case "null":
      return { bytes: "null".length, textChars: 0 };
    case "array":
      return arraySize(node, where);
    case "object":
      return objectSize(node, where);
  }
  throw unbounded(where, "accepts any value");
}

function stringSize(node: JsonSchema, where: string): Size {
  const maxLength = typeof node.maxLength === "number" ? node.maxLength : Infinity;
  const fromPattern = typeof node.pattern === "string" ? asciiPatternMaxLength(node.pattern) : null;
  if (fromPattern !== null) return { bytes: 2 + Math.min(fromPattern, maxLength), textChars: 0 };
  if (maxLength === Infinity) throw unbounded(where, "is a string with no maximum length");
  return { bytes: 2, textChars: maxLength };
}

function arraySize(node: JsonSchema, where: string): Size {
  if (typeof node.maxItems !== "number") throw unbounded(where, "is a list with no maximum length");
  const items = typeof node.items === "object" && node.items !== null ? node.items : {};
  const item = sizeOf(items as JsonSchema, `${where}[]`);
  return {
    bytes: 2 + node.maxItems * (WHITESPACE_PER_VALUE + item.bytes + 1),
    textChars: node.maxItems * item.textChars,
  };
}

function objectSize(node: JsonSchema, where: string): Size {
  let bytes = 2;
  let textChars = 0;
  const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, value] of Object.entries(properties)) {
    const member = sizeOf(value, `${where}.${name}`);
    bytes += WHITESPACE_PER_VALUE + literalBytes(name) + 1 + member.bytes + 1;
    textChars += member.textChars;
  }
  const extra = node.additionalProperties;
  // A record (`z.record`): as many members as maxProperties allows, each name and value bounded.
  if (typeof extra === "object" && extra !== null && Object.keys(extra).length > 0) {
    if (typeof node.maxProperties !== "number") {
      throw unbounded(where, "is a record with no maximum number of members");
    }
    const names = sizeOf({ type: "string", ...(node.propertyNames as object) }, `${where} names`);
    const value = sizeOf(extra as JsonSchema, `${where}[name]`);
    bytes += node.maxProperties * (WHITESPACE_PER_VALUE + names.bytes + 1 + value.bytes + 1);
    textChars += node.maxProperties * (names.textChars + value.textChars);
  } else if (typeof extra === "object" && extra !== null) {
    throw unbounded(where, "accepts members of any name and value");
  }
  return { bytes, textChars };
}

/** The larger of several sizes (a union is as large as its largest branch). */
function largest(sizes: Size[]): Size {
  const total = (s: Size) => s.bytes + JSON_BYTES_PER_TEXT_CHAR * s.textChars;
  return sizes.reduce((a, b) => (total(b) > total(a) ? b : a));
}

/** Bytes of a literal as JSON.stringify writes it (UTF-8). */
function literalBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).byteLength;
}

function numberBytes(node: JsonSchema): number {
  const { minimum, maximum } = node;
  if (node.type === "integer" && typeof minimum === "number" && typeof maximum === "number") {
    return Math.max(String(minimum).length, String(maximum).length);
  }
  return NUMBER_BYTES;
}

/**
 * The longest string a pattern admits when it is anchored and made only of ASCII character
 * classes and literals with fixed or bounded repeats (`^[a-z0-9][a-z0-9_-]{0,31}$` → 32);
 * null for anything else (open repeats, alternation, groups, `.`, negated classes, non-ASCII).
 *
 * @example asciiPatternMaxLength("^[0-9a-f]{40}$") // 40
 */
export function asciiPatternMaxLength(pattern: string): number | null {
  const atoms =
    /^\^((?:(?:\[[\x20-\x5b\x5e-\x7e]+\]|[A-Za-z0-9_:/-]|\\[-.dw_:/])(?:\{\d+(?:,\d+)?\}|\?)?)*)\$$/;
  const match = atoms.exec(pattern);
  if (match === null || match[1] === undefined || match[1].includes("[^")) return null;
  let length = 0;
  const atom = /(\[[^\]]+\]|\\.|.)(?:\{(\d+)(?:,(\d+))?\}|(\?))?/g;
  for (const [, , exactly, most, optional] of match[1].matchAll(atom)) {
    length += optional !== undefined ? 1 : Number(most ?? exactly ?? 1);
  }
  return length;
}

function unbounded(where: string, what: string): Error {
  return new Error(`${where} ${what}: give it a maximum, or no body limit can be derived`);
}
