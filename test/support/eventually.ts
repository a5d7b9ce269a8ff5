import { vi } from "vitest";

/** How long {@link eventually} waits before it gives up. */
export const PATIENT_MS = 120_000;

/**
 * Waits until `check` holds, as `vi.waitUntil` does, with a patient limit: how soon a condition
 * comes true depends on how busy the machine is, and a test's verdict must not. The limit only
 * stops a condition that never comes true.
 *
 * @example
 * await eventually(async () => (await api.getSession(ALICE, id)).status === "idle");
 */
export function eventually<T>(
  check: () => T | Promise<T>,
  opts: { interval?: number } = {},
): Promise<T> {
  return vi.waitUntil(check, { timeout: PATIENT_MS, interval: opts.interval ?? 20 });
}
