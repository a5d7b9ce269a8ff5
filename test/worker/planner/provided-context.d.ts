import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Anthropic Messages API test double's URL, from test/client/anthropic-double-setup.ts. */
    anthropicDoubleUrl: string;
    /** The OpenAI Chat Completions API test double's URL, from the same setup. */
    openaiDoubleUrl: string;
    /** The command server's echo (test/support/command-server-echo.ts), from the same setup. */
    commandServerEchoUrl: string;
  }
}
