import { isCancel, select } from "@clack/prompts";
import type { Session } from "../../src/protocol/index.ts";
import { PRESET_NAMES, type PresetName, presetBinary, presetName } from "../handoff/presets.ts";
import {
  carryOutTeleport,
  findOnPath,
  saveTeleportedPlan,
  type TeleportChoice,
} from "../handoff/teleport.ts";
import { terminalLine } from "../terminal/text.ts";
import { EXIT } from "./exit-codes.ts";
import type { Settings } from "./flags.ts";
import type { Outcome, Reporter } from "./reporter.ts";

/**
 * The CLI's hand-off of a decided plan to where it is carried out, by its `kind`: an approved
 * plan is the cloud's (say where to follow it and how to fetch the changes); a teleported one is
 * saved here, reported, and given to the --on-teleport command as the user chooses (the
 * teleport itself is teleport.ts).
 */

/**
 * Reports the outcome and carries it out; resolves with the exit code (0, or 1 when the
 * --on-teleport command failed — the plan file is kept either way).
 */
export async function handOff(
  session: Session,
  outcome: Outcome,
  settings: Settings,
  reporter: Reporter,
): Promise<number> {
  if (outcome.kind === "approved") {
    reporter.outcome(outcome);
    reporter.note(
      `The cloud is executing the approved plan. Follow it at ${session.review_url}\n` +
        `When it is done, fetch the changes: planport pull ${session.id}  (add --apply to apply them here)`,
    );
    return EXIT.ok;
  }
  reporter.pause();
  const planFile = saveTeleportedPlan({
    plan: outcome.plan,
    title: session.title,
    repoRoot: settings.repoRoot,
    plansDir: settings.plansDir,
    warn: reporter.warn,
  });
  reporter.outcome({ ...outcome, planFile });
  const interactive =
    !settings.json && process.stdin.isTTY === true && process.stderr.isTTY === true;
  // On a terminal without --on-teleport, the picker offers the first coding agent installed
  // here (claude, codex, gemini, aider, opencode): what "implement here" means to a user of
  // Ultraplan. Without a terminal nothing is started unasked.
  const agent =
    settings.onTeleport ?? (interactive ? (installedAgent(process.env) ?? undefined) : undefined);
  if (interactive && agent === undefined) {
    reporter.note(
      `No coding agent found on PATH (${PRESET_NAMES.join(", ")}) to hand the plan to.`,
    );
  }
  const { choice, commandExitCode, notInstalled } = await carryOutTeleport({
    plan: outcome.plan,
    planFile,
    repoRoot: settings.repoRoot,
    onTeleport: agent,
    choose: interactive ? (file) => askChoice(file, agent ?? "") : undefined,
    output: settings.json ? "stderr" : "inherit",
  });
  if (notInstalled !== undefined) {
    reporter.warn(`${notInstalled}. The plan is saved at ${planFile}`);
    return EXIT.localFailure;
  }
  if (choice === "cancel") {
    reporter.note(`The plan is saved at ${planFile}`);
    if (settings.onTeleport === undefined) {
      reporter.note(
        "Pass --on-teleport CMD (or set PLANPORT_ON_TELEPORT) to hand plans to your agent.",
      );
    }
    return EXIT.ok;
  }
  if (commandExitCode !== 0) {
    reporter.warn(
      `the --on-teleport command exited with ${commandExitCode}; the plan is saved at ${planFile}`,
    );
    return EXIT.localFailure;
  }
  return EXIT.ok;
}

/** The first preset agent on PATH, or null. */
function installedAgent(env: NodeJS.ProcessEnv): PresetName | null {
  return PRESET_NAMES.find((name) => findOnPath(presetBinary(name), env) !== null) ?? null;
}

async function askChoice(planFile: string, agent: string): Promise<TeleportChoice> {
  const preset = presetName(agent);
  const who = terminalLine(preset ?? agent);
  const choice = await select<TeleportChoice>({
    message: `The plan is saved at ${terminalLine(planFile)}. What next?`,
    options: [
      {
        value: "implement",
        label: "Implement here",
        hint: preset
          ? `${who}, continuing its last conversation in this folder`
          : `run ${who} with the plan`,
      },
      {
        value: "fresh",
        label: "Start a new session",
        hint: preset ? `${who}, with a fresh context` : `run ${who} with a fresh context`,
      },
      { value: "cancel", label: "Cancel", hint: "keep the file" },
    ],
    output: process.stderr,
  });
  return isCancel(choice) ? "cancel" : choice;
}
