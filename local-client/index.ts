/**
 * The planport local client as a library (docs/PROTOCOL.md "Local client library"): the pure
 * ExitPlanMode scanner, the poller around it, the HTTP client, and the teleport hand-off. Its
 * errors carry data and say what happened; advice in planport's commands is the CLI's.
 *
 * @example
 * import { pollForApprovedExitPlanMode, PollError } from "planport/local-client/index.ts";
 * try {
 *   const { kind, plan } = await pollForApprovedExitPlanMode({ server, token, sessionId });
 * } catch (err) {
 *   if (err instanceof PollError && err.detail.reason === "terminated") show(err.detail.subtype);
 * }
 */

export { formatDuration, parseDuration } from "./duration.ts";
export {
  carryOutTeleport,
  handOffTeleport,
  planSlug,
  resolvePlansDir,
  runOnTeleport,
  saveTeleportedPlan,
  type TeleportChoice,
  writePlanFile,
} from "./handoff/teleport.ts";
export {
  type Api,
  ApiError,
  createApi,
  isTransient,
  type SessionState,
  withRetry,
} from "./http/api.ts";
export {
  PollError,
  type PollErrorDetail,
  type PollErrorReason,
  type PollProgress,
} from "./poll/error.ts";
export {
  type GroupPollOptions,
  type GroupPollOutcome,
  pollGroupForChosenPlan,
} from "./poll/group-poller.ts";
export {
  type PollOptions,
  type PollOutcome,
  type PollPhase,
  pollForApprovedExitPlanMode,
} from "./poll/poller.ts";
export {
  ExitPlanModeScanner,
  MarkerMissingError,
  type ScannerState,
  type ScanResult,
} from "./poll/scanner.ts";
