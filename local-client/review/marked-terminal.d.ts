/** marked-terminal ships no types; this is the part planport uses (its README's options). */
declare module "marked-terminal" {
  import type { MarkedExtension } from "marked";
  export interface TerminalRendererOptions {
    width?: number;
    reflowText?: boolean;
    emoji?: boolean;
    tab?: number;
    showSectionPrefix?: boolean;
    unescape?: boolean;
  }
  export function markedTerminal(options?: TerminalRendererOptions): MarkedExtension;
}
