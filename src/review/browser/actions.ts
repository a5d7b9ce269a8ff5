import { MAX_APPROVABLE_PLAN_CHARS } from "../../protocol/limits.ts";
import { ApiError, callApi } from "./api.ts";
import { saveComments } from "./comments.ts";
import { announce, showError } from "./feedback.ts";
import { pollNow, refreshPage } from "./live.ts";
import { state } from "./page-state.ts";

/**
 * The actions. Posts answers, decisions, messages and stop requests to the JSON API, checks
 * what the API would refuse before sending (keep planning needs feedback or comments; an edited
 * plan over the limit), and shows the API's own error sentence otherwise.
 */

type Decision = "approve" | "teleport" | "reject";

/** Sends one API call from `control` (disabled meanwhile), then refreshes the page and polls. */
export async function send(
  control: HTMLButtonElement,
  form: Element | null,
  method: string,
  path: string,
  payload: unknown,
  onSuccess?: () => void,
): Promise<void> {
  const errorEl = form ? form.querySelector("[data-form-error]") : null;
  if (errorEl) errorEl.textContent = "";
  control.disabled = true;
  control.setAttribute("aria-busy", "true");
  try {
    await callApi(method, path, payload);
    if (onSuccess) onSuccess();
    await refreshPage().catch(() => {
      state.needsRefresh = true;
    });
    pollNow();
  } catch (err) {
    const message = err instanceof ApiError ? `${err.message} (${err.code})` : String(err);
    showError(errorEl, message);
  } finally {
    control.disabled = false;
    control.removeAttribute("aria-busy");
  }
}

export async function decide(control: HTMLButtonElement, decision: Decision): Promise<void> {
  const form = document.getElementById("decision-form");
  if (!form) return;
  const errorEl = form.querySelector("[data-form-error]");
  const payload: {
    tool_use_id: string | undefined;
    decision: Decision;
    feedback?: string;
    comments?: { quote: string; text: string }[];
    plan?: string;
  } = { tool_use_id: form.dataset.toolUseId, decision };
  if (decision === "reject") {
    const feedbackEl = document.getElementById("feedback") as HTMLTextAreaElement | null;
    const feedback = feedbackEl ? feedbackEl.value.trim() : "";
    if (!feedback && state.comments.length === 0) {
      return showError(
        errorEl,
        "Write what should change, or add a comment on a passage of the plan, before asking the planner to keep planning.",
        feedbackEl,
      );
    }
    if (feedback) payload.feedback = feedback;
    if (state.comments.length > 0) {
      payload.comments = state.comments.map((c) => ({ quote: c.quote, text: c.text }));
    }
    return send(control, form, "POST", "/decision", payload, () => {
      state.comments = [];
      saveComments();
      if (feedbackEl) feedbackEl.value = "";
      announce("Sent. The planner keeps planning.");
    });
  }
  const editor = document.getElementById("plan-editor") as HTMLTextAreaElement | null;
  if (editor && editor.value !== editor.defaultValue) {
    if (editor.value.length > MAX_APPROVABLE_PLAN_CHARS) {
      return showError(
        errorEl,
        `The edited plan has ${editor.value.length} characters; at most ${MAX_APPROVABLE_PLAN_CHARS} can be approved. Shorten it first.`,
        editor,
      );
    }
    payload.plan = editor.value;
  }
  return send(control, form, "POST", "/decision", payload, () => {
    announce(
      decision === "teleport"
        ? "Plan approved and sent to your terminal."
        : "Plan approved. It runs in the cloud now.",
    );
  });
}

export async function submitAnswers(form: HTMLFormElement): Promise<void> {
  const errorEl = form.querySelector("[data-form-error]");
  const answers: Record<string, string> = {};
  for (const fieldset of Array.from(form.querySelectorAll("fieldset.question"))) {
    // The exact question text is the answer's key; the page shows it with visible marks.
    const question = exactText(fieldset.getAttribute("data-question"));
    const chosen: string[] = [];
    const inputs = fieldset.querySelectorAll<HTMLInputElement>(
      "input[type=radio], input[type=checkbox]",
    );
    for (const input of Array.from(inputs)) {
      if (!input.checked) continue;
      if (input.hasAttribute("data-other")) {
        const other = fieldset.querySelector<HTMLInputElement>(".other-text");
        const text = other ? other.value.trim() : "";
        if (!text) {
          return showError(
            errorEl,
            `Write your own answer next to “Other” for: ${question}`,
            other,
          );
        }
        chosen.push(text);
      } else {
        chosen.push(exactText(input.value));
      }
    }
    if (chosen.length === 0) {
      const first = fieldset.querySelector<HTMLInputElement>("input");
      return showError(
        errorEl,
        `Answer every question (pick an option, or write your own under “Other”): ${question}`,
        first,
      );
    }
    answers[question] = chosen.join(", ");
  }
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  if (!button) return;
  const payload = { tool_use_id: form.dataset.toolUseId, answers };
  return send(button, form, "POST", "/messages", payload, () => {
    announce("Answers sent. The planner continues.");
  });
}

/** Text the server wrote as JSON into an attribute (hidden-marks.ts `exactTextAttribute`). */
function exactText(attribute: string | null): string {
  try {
    const value: unknown = JSON.parse(attribute ?? "");
    return typeof value === "string" ? value : "";
  } catch {
    return "";
  }
}

export async function submitMessage(form: HTMLFormElement): Promise<void> {
  const textEl = document.getElementById("message-text") as HTMLTextAreaElement | null;
  const text = textEl ? textEl.value.trim() : "";
  if (!textEl || !text) {
    return showError(form.querySelector("[data-form-error]"), "Write a message first.", textEl);
  }
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  if (!button) return;
  return send(button, form, "POST", "/messages", { text }, () => {
    textEl.value = "";
    announce("Message sent.");
  });
}

export function setStopConfirm(open: boolean): void {
  const box = document.querySelector<HTMLElement>("[data-stop-confirm]");
  const stop = document.querySelector<HTMLElement>('[data-action="stop"]');
  if (!box || !stop) return;
  box.hidden = !open;
  stop.hidden = open;
  const target = open ? box.querySelector<HTMLElement>('[data-action="stop-confirm"]') : stop;
  if (target) target.focus();
}
