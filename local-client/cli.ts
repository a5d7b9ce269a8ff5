import { Command, CommanderError, Option } from "commander";
import { EXIT } from "./cli/exit-codes.ts";
import type { PlanFlags, PollFlags } from "./cli/poll-command.ts";
import type { PullFlags } from "./cli/pull-check.ts";
import type { ReviewFlags } from "./cli/review-command.ts";
import type { ServerFlags } from "./cli/session-commands.ts";
import type { WatchFlags } from "./cli/watch-command.ts";
import { UsageError } from "./errors.ts";
import { terminalJson, terminalText } from "./terminal/text.ts";

/**
 * The `planport` command line (docs/PROTOCOL.md "CLI"). Each command is a thin shell over one function
 * in `cli/`; this file only declares the commands and their flags and turns outcomes into exit
 * codes. Each command's module is imported when the command runs, never here: `--help` and a
 * usage error load this table and commander, nothing else (the build splits each command's
 * code into chunks of its own).
 */

function pollingOptions(cmd: Command): Command {
  return cmd
    .option("--repo <dir>", "the repository (default: the current directory)")
    .option(
      "--server <url>",
      "the planport worker (default: PLANPORT_URL, `planport serve`'s config, or the embedded local worker)",
    )
    .option("--token <token>", "API token (default: PLANPORT_TOKEN)")
    .option(
      "--timeout <duration>",
      "give up waiting for a decision after this long (ms, s, m)",
      "30m",
    )
    .option("--interval <duration>", "time between polls (ms, s, m)", "3s")
    .option(
      "--plans-dir <dir>",
      "where teleported plans are written (inside the repository; default ~/.planport/plans)",
    )
    .option(
      "--on-teleport <cmd>",
      "claude, codex, gemini, aider or opencode (starts that agent with the plan), or a shell command that receives a teleported plan on stdin (PLANPORT_PLAN_FILE, PLANPORT_FRESH_CONTEXT set)",
    )
    .option("--json", "print only NDJSON events on stdout")
    .option(
      "--quiet",
      "no terminal bell or desktop notification when the plan is ready or input is needed",
    );
}

function serverOptions(cmd: Command): Command {
  return cmd.option("--server <url>", "the planport worker").option("--token <token>", "API token");
}

/**
 * Builds the program; `done` receives each command's exit code.
 *
 * @example
 * const program = buildProgram((code) => { process.exitCode = code; });
 * await program.parseAsync(process.argv);
 */
export function buildProgram(done: (code: number) => void): Command {
  const program = new Command("planport")
    .description("Plan in the cloud, review in the browser, execute anywhere.")
    .version("0.1.0")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();

  pollingOptions(
    program
      .command("plan")
      .description("snapshot the repository, start a remote planning session and wait for the plan")
      .argument("[task...]", "what to plan (optional with --seed-plan)")
      .option(
        "--seed-plan <file>",
        "a draft plan to refine instead of starting over (- reads stdin)",
      )
      .addOption(new Option("--planner <name>", "auto, offline, anthropic, openai, workers-ai"))
      .option("--variant <name>", "the planning workflow: simple, visual or deep")
      .option(
        "--attempts <n>",
        "best-of-N: start N sessions (1–4) with the same planner, compare them, keep the first decided",
      )
      .option(
        "--planners <list>",
        "best-of-N: one session per planner, e.g. anthropic,openai (at most 4)",
      )
      .option(
        "--approvers <labels>",
        "owners who must approve the plan (comma-separated labels); you can still keep it planning",
      ),
  ).action(async (task: string[], opts: PlanFlags) => {
    const { runPlan } = await import("./cli/poll-command.ts");
    done(await runPlan(task, opts));
  });

  pollingOptions(
    program
      .command("attach")
      .description(
        "resume waiting for a session's plan (after Ctrl-C, a lost network or a timeout)",
      )
      .argument("<session-id>"),
  ).action(async (id: string, opts: PollFlags) => {
    const { runAttach } = await import("./cli/poll-command.ts");
    done(await runAttach(id, opts));
  });

  serverOptions(
    program
      .command("review")
      .description(
        "review a session's plan in this terminal: answer, approve and run in the cloud, approve and send to terminal, keep planning, stop session",
      )
      .argument("<session-id>"),
  )
    .option(
      "--plans-dir <dir>",
      "where a plan sent to this terminal is written (inside the repository; default ~/.planport/plans)",
    )
    .option(
      "--on-teleport <cmd>",
      "claude, codex, gemini, aider or opencode, or a shell command: what a plan sent to this terminal is handed to",
    )
    .option("--repo <dir>", "the repository the plan is for (default: the current directory)")
    .option("--interval <duration>", "time between polls (ms, s, m)", "3s")
    .option("--json", "refused: the review is interactive (read the session with status --json)")
    .action(async (id: string, opts: ReviewFlags) => {
      const { runReview } = await import("./cli/review-command.ts");
      done(await runReview(id, opts));
    });

  serverOptions(program.command("status").description("show one session").argument("<session-id>"))
    .option("--json", "print the session as JSON")
    .action(async (id: string, opts: ServerFlags) => {
      const { runStatus } = await import("./cli/session-commands.ts");
      done(await runStatus(id, opts));
    });

  serverOptions(
    program
      .command("show")
      .description("print a session's plan (the text the review page shows)")
      .argument("<session-id>"),
  )
    .option("--revision <n>", "one earlier revision of the plan (1 is the first)")
    .option("--json", "print the plan file as JSON: path, content, revision, edited_by_user")
    .action(async (id: string, opts: ServerFlags & { revision?: string }) => {
      const { runShow } = await import("./cli/session-commands.ts");
      done(await runShow(id, opts));
    });

  serverOptions(program.command("list").description("list your sessions, newest first"))
    .option("--limit <n>", "how many (1–100)", "50")
    .option("--awaiting-me", "list the sessions waiting for your approval instead")
    .option("--json", "print the list as JSON")
    .action(async (opts: ServerFlags & { limit?: string; awaitingMe?: boolean }) => {
      const { runList } = await import("./cli/session-commands.ts");
      done(await runList(opts));
    });

  serverOptions(
    program
      .command("watch")
      .description("a live table of your sessions, printing each phase change (Ctrl-C to stop)"),
  )
    .option(
      "--json",
      'print one {"event":"phase","id","phase","outcome"} line per change, nothing else',
    )
    .option("--interval <duration>", "time between refreshes (ms, s, m)", "3s")
    .action(async (opts: WatchFlags) => {
      const { runWatch } = await import("./cli/watch-command.ts");
      done(await runWatch(opts));
    });

  serverOptions(
    program.command("stop").description("stop (archive) a session").argument("<session-id>"),
  )
    .option("--json", 'print {"event":"stopped",…the session} or an error line as JSON')
    .action(async (id: string, opts: ServerFlags) => {
      const { runStop } = await import("./cli/session-commands.ts");
      done(await runStop(id, opts));
    });

  serverOptions(
    program
      .command("pull")
      .description("print the changes a remote execution made (a unified diff)")
      .argument("<session-id>"),
  )
    .option(
      "--apply",
      "apply them here with git apply --3way (refuses if touched files have uncommitted work)",
    )
    .option(
      "--check",
      "dry run: say whether they would apply cleanly here (exit 0) or what conflicts and which touched files have uncommitted work (exit 1)",
    )
    .option("--branch <name>", "with --apply: apply on a new branch of this name")
    .option("--repo <dir>", "where to apply (default: the current directory)")
    .option("--json", "one JSON line: the changes, the check, what was applied, or the error")
    .action(async (id: string, opts: ServerFlags & PullFlags) => {
      const { runPull } = await import("./cli/session-commands.ts");
      done(await runPull(id, opts));
    });

  program
    .command("serve")
    .description(
      "run the planport worker in the foreground and make this machine's commands use it",
    )
    .option("--port <port>", "TCP port on 127.0.0.1", "8787")
    .option("--persist <dir>", "state directory (default: the embedded worker's)")
    .option("--json", "print the worker's url and token as one JSON line")
    .action(async (opts: { port?: string; persist?: string; json?: boolean }) => {
      const { runServe } = await import("./cli/serve.ts");
      done(await runServe(opts));
    });

  program
    .command("executor")
    .description(
      'run the local command executor (Docker) in the foreground, for a `wrangler dev` worker\'s "Approve and run in the cloud"',
    )
    .option("--port <port>", "TCP port on 127.0.0.1 (default: any free port)")
    .option("--state <dir>", "its state folder (default: the executor folder of planport's data)")
    .option("--build-image", "build the execution image first (reused when current)")
    .option("--json", "print its url, token and health as one JSON line")
    .action(
      async (opts: { port?: string; state?: string; buildImage?: boolean; json?: boolean }) => {
        const { runExecutor } = await import("./cli/executor-command.ts");
        done(await runExecutor(opts));
      },
    );

  program
    .command("embedded")
    .description("show the embedded local worker started on demand, start it, or stop it")
    .option("--start", "start it (to read its kept sessions; it stops again when unused)")
    .option("--stop", "stop it")
    .option("--json", "print one JSON line: whether it runs (or ran, with --stop)")
    .action(async (opts: { start?: boolean; stop?: boolean; json?: boolean }) => {
      const { runEmbedded } = await import("./cli/serve.ts");
      done(await runEmbedded(opts));
    });

  serverOptions(
    program
      .command("mcp")
      .description(
        "run the planport MCP server on stdio (tools: plan, wait_for_plan, status, list, stop, pull_changes)",
      ),
  ).action(async (opts: { server?: string; token?: string }) => {
    const { runMcp } = await import("./mcp/stdio.ts");
    done(await runMcp(opts));
  });

  return program;
}

/** The error line of docs/PROTOCOL.md "CLI" for a failure before any command ran. */
function jsonErrorLine(reason: "usage" | "network_or_unknown", message: string): void {
  process.stdout.write(`${terminalJson({ event: "error", reason, message })}\n`);
}

/** Runs the CLI and resolves with the exit code (never throws). */
export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    const json = argv.includes("--json");
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return EXIT.ok;
      // Commander has said it on stderr; a --json caller reads stdout.
      if (json) jsonErrorLine("usage", err.message.replace(/^error: /, ""));
      return EXIT.usage;
    }
    const message = err instanceof Error ? err.message : String(err);
    const usage = err instanceof UsageError;
    if (json) jsonErrorLine(usage ? "usage" : "network_or_unknown", message);
    else process.stderr.write(`planport: ${terminalText(message)}\n`);
    return usage ? EXIT.usage : EXIT.networkOrUnknown;
  }
}
