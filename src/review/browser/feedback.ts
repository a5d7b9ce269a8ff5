import { setVisibleText } from "./visible-text.ts";

/**
 * What the script tells the reader: an action's error beside its form, a polite announcement
 * for screen readers, and the connection line under the status.
 */

/** Shows `message` in a form's error slot and moves the focus to what needs fixing. */
export function showError(
  errorEl: Element | null,
  message: string,
  focusTarget?: HTMLElement | null,
): void {
  // The API's sentences can quote the planner's text (a question it does not know).
  if (errorEl) setVisibleText(errorEl, message);
  // With nothing to fix the error is all there is to see: on a phone the button that was
  // tapped (the decision bar) can be a whole page away from its form's error slot.
  if (focusTarget) focusTarget.focus();
  else errorEl?.scrollIntoView({ block: "nearest" });
}

export function announce(text: string): void {
  const el = document.getElementById("announcer");
  if (el) setVisibleText(el, text);
}

export function showConnection(text: string): void {
  const el = document.getElementById("connection");
  if (!el) return;
  setVisibleText(el, text);
  el.hidden = text === "";
}

/** The live region {@link announce} writes to, added once at start. */
export function addAnnouncer(parent: HTMLElement): void {
  const announcer = document.createElement("p");
  announcer.id = "announcer";
  announcer.className = "visually-hidden";
  announcer.setAttribute("aria-live", "polite");
  parent.append(announcer);
}
