/**
 * Vitest global setup (runs in Node before the workerd tests): starts the model provider TEST
 * DOUBLES — the Anthropic Messages API and the OpenAI Chat Completions API — and the command
 * server's echo (test/support/command-server-echo.ts), and hands their URLs to the tests
 * through `provide`/`inject`.
 */
import type { TestProject } from "vitest/node";
import { startCommandServerEcho } from "../support/command-server-echo.ts";
import { startAnthropicDouble } from "./anthropic-double.ts";
import { startOpenaiDouble } from "./openai-double.ts";

declare module "vitest" {
  export interface ProvidedContext {
    anthropicDoubleUrl: string;
    openaiDoubleUrl: string;
    commandServerEchoUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const anthropic = await startAnthropicDouble();
  const openai = await startOpenaiDouble();
  project.provide("anthropicDoubleUrl", anthropic.url);
  project.provide("openaiDoubleUrl", openai.url);
  const echo = await startCommandServerEcho();
  project.provide("commandServerEchoUrl", echo.url);
  return async () => {
    await anthropic.close();
    await openai.close();
    await echo.close();
  };
}
