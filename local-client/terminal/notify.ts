import { terminalLine, truncateLine } from "./text.ts";

/**
 * Telling a user who walked away that a session wants them: the terminal bell, and a desktop
 * notification where the terminal shows one for an escape sequence. Pure: the environment is
 * passed in, the bytes are returned; the reporter (cli/reporter.ts) writes them on a TTY.
 *
 * Which terminal speaks which sequence (read from the variables each one sets):
 * - OSC 9 (`ESC ] 9 ; text BEL`): iTerm2 (`TERM_PROGRAM=iTerm.app`), Windows Terminal
 *   (`WT_SESSION`), ConEmu (`ConEmuPID`), Ghostty (`TERM_PROGRAM=ghostty`), kitty
 *   (`TERM=xterm-kitty` or `KITTY_WINDOW_ID`);
 * - OSC 777 (`ESC ] 777 ; notify ; title ; body BEL`): WezTerm (`TERM_PROGRAM=WezTerm`),
 *   foot (`TERM=foot…`), rxvt-unicode (`TERM=rxvt…`);
 * - anything else, and inside tmux or screen (`TMUX`, `STY`, `TERM=screen…|tmux…`: they swallow
 *   OSC sequences unless passthrough is configured, and pass the bell on): the bell alone.
 */

export type NotificationProtocol = "osc9" | "osc777" | "bell";

/** Why a notification is sent: the two moments the user has to act. */
export type NotificationReason = "plan_ready" | "needs_input";

/** The longest notification body sent: desktop notifications show one or two short lines. */
export const NOTIFICATION_MAX_CHARS = 200;

const BEL = "\x07";
const OSC = "\x1b]";

/**
 * The notification sequence the terminal described by `env` understands.
 *
 * @example
 * notificationProtocol({ TERM_PROGRAM: "iTerm.app" }) // → "osc9"
 * notificationProtocol({ TERM: "foot" }) // → "osc777"
 * notificationProtocol({ TERM: "xterm-256color" }) // → "bell"
 */
export function notificationProtocol(env: NodeJS.ProcessEnv): NotificationProtocol {
  const term = env.TERM ?? "";
  const program = env.TERM_PROGRAM ?? "";
  // A multiplexer sits between us and the terminal: what reaches the terminal is its call.
  if (env.TMUX || env.STY || /^(screen|tmux)/.test(term) || program === "tmux") return "bell";
  if (program === "WezTerm" || /^foot/.test(term) || /^rxvt/.test(term)) return "osc777";
  if (
    program === "iTerm.app" ||
    program === "ghostty" ||
    env.WT_SESSION ||
    env.ConEmuPID ||
    term === "xterm-kitty" ||
    env.KITTY_WINDOW_ID
  ) {
    return "osc9";
  }
  return "bell";
}

/**
 * The words of a notification: what happened and which session (the title comes from the
 * server: it is made one terminal-safe line and cut short).
 *
 * @example
 * notificationText("plan_ready", "Add OAuth login") // → "plan ready for review: Add OAuth login"
 */
export function notificationText(reason: NotificationReason, about: string): string {
  const what = reason === "plan_ready" ? "plan ready for review" : "a session needs your input";
  const subject = terminalLine(about);
  return subject === "" ? what : `${what}: ${subject}`;
}

/**
 * The bytes to write for a notification: the bell, then the desktop notification the
 * protocol has. `body` may come from the server: every control character goes (BEL or ESC
 * would end the sequence early and let the rest run as terminal input), and so does `;` in
 * the OSC 777 title, which separates its fields.
 *
 * @example
 * notificationBytes("osc9", "planport", "plan ready") // → "\x07\x1b]9;planport: plan ready\x07"
 * notificationBytes("bell", "planport", "plan ready") // → "\x07"
 */
export function notificationBytes(
  protocol: NotificationProtocol,
  title: string,
  body: string,
): string {
  const cleanTitle = truncateLine(terminalLine(title).replace(/;/g, ","), 60);
  const cleanBody = truncateLine(terminalLine(body), NOTIFICATION_MAX_CHARS);
  switch (protocol) {
    case "bell":
      return BEL;
    case "osc9":
      // The title leads the text: "9;4;…" and other digits-first texts are ConEmu's own
      // commands (progress bars), which a plain notification must never start with.
      return `${BEL}${OSC}9;${cleanTitle}: ${cleanBody}${BEL}`;
    case "osc777":
      return `${BEL}${OSC}777;notify;${cleanTitle};${cleanBody}${BEL}`;
  }
}
