/**
 * The planport local client as a library (CONTRACT "Local client library"): the pure ExitPlanMode
 * scanner, the poller around it, the HTTP client, and the teleport hand-off.
 *
 * @example
 * import { pollForApprovedExitPlanMode, PollError } from "planport/local-client/index.ts";
 * const { plan, executionTarget } = await pollForApprovedExitPlanMode({ server, token, sessionId });
 */
export { type Api, ApiError, createApi, isTransient, withRetry } from "./api.ts";
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
} from "./handoff.ts";
export {
  PollError,
  type PollErrorReason,
  type PollOptions,
  type PollOutcome,
  type PollPhase,
  type PollProgress,
  pollForApprovedExitPlanMode,
} from "./poller.ts";
export {
  ExitPlanModeScanner,
  MarkerMissingError,
  type ScannerState,
  type ScanResult,
} from "./scanner.ts";
