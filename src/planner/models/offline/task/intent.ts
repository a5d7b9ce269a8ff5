import type { TaskEvidence } from "./evidence.ts";
import { STOP_WORDS, splitIdentifier } from "./terms.ts";

/**
 * What a task asks for, read from its first line: the kind of change, the option or flag it
 * names, and the names it writes as code — what the steps and the "already in the code" notes
 * are about. Pure; a phrase it cannot read leaves a field empty rather than guessing.
 */

export type TaskKind = "add" | "fix" | "remove" | "change";

/**
 * What a task does, from its first verb: add (a feature, an option, a route), fix, remove, or
 * change (refactor, rename, speed up, use something else).
 *
 * @example
 * taskKind("Add GitHub OAuth login") // "add"
 * taskKind("Fix escaped path matcher over-matching") // "fix"
 * taskKind("getCookie should accept a prefix option") // "add"
 */
export function taskKind(task: string): TaskKind {
  const first = task
    .trim()
    .replace(/^\w+(\([^)]*\))?!?:\s*/, "")
    .toLowerCase();
  if (
    /^(add|adds|added|introduce|support|allow|enable|implement|create|expose|provide|accept|new\b)/.test(
      first,
    ) ||
    /^(let|make)\b.{0,80}\b(accept|support|take|load|allow|read|handle|use)s?\b/.test(first) ||
    // "getCookie should accept a prefix option": what the subject should take is new to it.
    /^[\w.`'"()-]+(?:\s+[\w.`'"()-]+){0,3}\s+(?:should|must|needs? to|could)\s+(?:also\s+)?(?:accept|support|take|allow|expose|provide)s?\s+(?:an?|the|new|its|custom|optional)\b/.test(
      first,
    )
  )
    return "add";
  if (
    /^(fix|fixes|fixed|handle|prevent|avoid|correct|resolve|ensure|preserve|detect|rescue|check|close|continue|don'?t|do not|treat|validate|omit|warn|respect|honou?r|guard|protect|stop|restore|bug)/.test(
      first,
    )
  )
    return "fix";
  if (/^(remove|drop|delete|deprecate|disable|get rid)/.test(first)) return "remove";
  return "change";
}

export interface TaskIntent {
  kind: TaskKind;
  /** The option, flag or setting the task names (`skip` of "add a skip option", `maxAge`, `--dry-run`). */
  option: string | null;
  /** What the task does to it, when it says ("validated" → "validate"). */
  treatment: string | null;
  /** Names the first line writes as code (`getCookie`, `from_file` of `Config.from_file`). */
  names: string[];
  /**
   * The module the change goes to, when the first line says so after the option or thing it
   * adds ("… option to cors", "… to the logger middleware", "… flag to the install command").
   */
  target: string | null;
  /**
   * The command-line command a new flag is for ("… option to `flask run`", "… flag to the
   * install command" → `run`, `install`): its own function takes the flag, not a helper.
   */
  command: string | null;
}

/** Words that describe an option rather than name it ("a new option", "a custom option"). */
const NOT_A_NAME = new Set(
  "new custom optional extra additional global default own separate specific simple single same other config configuration".split(
    " ",
  ),
);

/**
 * Reads the intent of a task.
 *
 * @example
 * taskIntent(readTask("add a validated maxAge option to cors"))
 * // { kind: "add", option: "maxAge", treatment: "validate", names: ["maxAge"] }
 */
export function taskIntent(e: TaskEvidence): TaskIntent {
  const title = e.title;
  let names = e.names
    .filter((n) => n.where === "title" || (n.where === "prose" && n.first < title.length))
    .map((n) => n.name)
    .filter((n, i, all) => all.indexOf(n) === i && n.length >= 2);
  // `Config.from_file` is about the method: a member comes before its owner.
  const members = names.filter((n) => names.some((owner) => title.includes(`${owner}.${n}`)));
  names = [...members, ...names.filter((n) => !members.includes(n))];
  let option: string | null = null;
  const flag = /(?:^|\s)(--[a-z][\w-]*)/i.exec(title);
  const before =
    /\b(?:an?|the|new)\s+(?:\w+\s+){0,2}?[`'"]?([A-Za-z_][\w-]*)[`'"]?\s+(?:option|flag|setting|parameter|param|argument|config key|switch)s?\b/i.exec(
      title,
    );
  const after =
    /\b(?:option|flag|setting|parameter|argument)\s+[`'"]?([A-Za-z_][\w-]*)[`'"]?/i.exec(title);
  const quoted =
    /[`'"]([A-Za-z_][\w.-]*)[`'"]\s+(?:option|flag|setting|parameter|argument)s?\b/i.exec(title);
  if (flag !== null) option = flag[1]!;
  else if (quoted !== null) option = quoted[1]!.split(".").pop()!;
  else if (before !== null && isName(before[1]!)) option = before[1]!;
  else if (
    after !== null &&
    isName(after[1]!) &&
    !/^(to|for|in|of|on|that|which|so)$/i.test(after[1]!)
  )
    option = after[1]!;
  const treated =
    /\b(validated|validating|validate|typed|required|configurable|optional|deprecated)\b/i.exec(
      title,
    );
  const treatment =
    treated === null
      ? null
      : treated[1]!
          .toLowerCase()
          .replace(/^validat(ed|ing)$/, "validate")
          .replace(/ed$/, "");
  const to =
    /\b(?:option|flag|setting|parameter|argument|support|method|hook|field|check)s?\s+(?:to|in|into|for|on)\s+(?:the\s+)?[`'"]?([A-Za-z_][\w-]*)/i.exec(
      title,
    );
  const target = to !== null && isName(to[1]!) ? to[1]! : null;
  return { kind: taskKind(title), option, treatment, names, target, command: commandOf(title) };
}

/**
 * The command a title adds a flag or option to: the word after the program in "… to
 * `flask run`" (a flag's title), or the word before "command" ("the install command").
 *
 * @example
 * commandOf("Add an --exclude-patterns option to flask run") // "run"
 * commandOf("add a --dry-run flag to the install command") // "install"
 */
export function commandOf(title: string): string | null {
  const named = /\b(?:the\s+)?[`'"]?([a-z][\w-]*)[`'"]?\s+(?:sub)?command\b/i.exec(title);
  if (named !== null && isName(named[1]!)) return named[1]!.toLowerCase();
  if (!/(?:^|\s)--[a-z]/i.test(title)) return null;
  const invoked = /\b(?:to|of|for|in|on)\s+(?:the\s+)?`?([a-z][\w.-]*)\s+([a-z][\w-]*)`?/i.exec(
    title,
  );
  return invoked !== null && isName(invoked[2]!) ? invoked[2]!.toLowerCase() : null;
}

function isName(word: string): boolean {
  const lower = word.toLowerCase();
  return (
    !NOT_A_NAME.has(lower) &&
    !STOP_WORDS.has(lower) &&
    splitIdentifier(word).join("").length >= 2 &&
    !/^(validated|typed|required|configurable|optional|deprecated)$/i.test(word)
  );
}
