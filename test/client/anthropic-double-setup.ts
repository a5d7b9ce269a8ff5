/**
 * Vitest global setup (runs in Node before the workerd tests): starts the Anthropic Messages API
 * TEST DOUBLE and hands its URL to the tests through `provide`/`inject`.
 */
import type { TestProject } from "vitest/node";
import { startAnthropicDouble } from "./anthropic-double.ts";

declare module "vitest" {
  export interface ProvidedContext {
    anthropicDoubleUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const double = await startAnthropicDouble();
  project.provide("anthropicDoubleUrl", double.url);
  return () => double.close();
}
