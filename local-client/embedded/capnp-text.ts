/**
 * Cap'n Proto's text format, for the configuration workerd reads (workerd-config.ts): the
 * embedded worker runs workerd from a config planport writes, and this is the one place its
 * syntax is produced. Pure.
 *
 * A struct is a plain object (its fields in order; `undefined` fields are left out), a list an
 * array, text a string, a number an integer; a file whose contents are embedded is tagged
 * ({@link capnpEmbed}). (Enumerants and `void` are not needed by planport's config, so they
 * have no form here.)
 */

export type CapnpValue =
  | string
  | number
  | boolean
  | CapnpTagged
  | readonly CapnpValue[]
  | { readonly [field: string]: CapnpValue | undefined };

export interface CapnpTagged {
  readonly [capnpTag]: "embed";
  readonly path: string;
}

const capnpTag: unique symbol = Symbol("capnp");

/**
 * The contents of a file, read by the parser: `embed "path"`, relative to the config file.
 *
 * @example
 * capnpText({ esModule: capnpEmbed("../worker/index.js") }) // → '(esModule = embed "../worker/index.js")'
 */
export function capnpEmbed(path: string): CapnpTagged {
  return { [capnpTag]: "embed", path };
}

/**
 * A value in Cap'n Proto's text format.
 *
 * @example
 * capnpText({ name: "a\"b", bindings: [{ name: "X", text: "1" }] })
 * // → '(name = "a\\"b", bindings = [(name = "X", text = "1")])'
 */
export function capnpText(value: CapnpValue): string {
  if (typeof value === "string") return capnpString(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
    return String(value);
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return `[${value.map(capnpText).join(", ")}]`;
  if (isTagged(value)) return `embed ${capnpString(value.path)}`;
  const fields: string[] = [];
  for (const [field, member] of Object.entries(value)) {
    if (member === undefined) continue;
    if (!/^[a-z][A-Za-z0-9]*$/.test(field)) throw new Error(`not a Cap'n Proto field: ${field}`);
    fields.push(`${field} = ${capnpText(member)}`);
  }
  return `(${fields.join(", ")})`;
}

function isTagged(value: object): value is CapnpTagged {
  return capnpTag in value;
}

/**
 * A text literal. Quotes and backslashes are escaped, and every control character is written
 * as `\xHH`, so a value can never end the literal or start a new field; other characters
 * stay as they are (the parser reads UTF-8).
 *
 * @example
 * capnpString('say "hi"\n') // → '"say \\"hi\\"\\x0a"'
 */
export function capnpString(text: string): string {
  if (text.includes("\0")) throw new Error("Cap'n Proto text cannot hold a NUL character");
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += char;
  }
  return `${out}"`;
}
