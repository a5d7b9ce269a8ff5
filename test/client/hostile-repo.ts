import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixtureRepo } from "./fixture-repo.ts";

/**
 * A repository received with its `.git/` from someone else (a tarball, a zip, a shared drive):
 * the fixture shop repository, whose configuration names a command for every key git may run
 * one from, with every hook in `.git/hooks/`. Each command leaves a marker file named after its
 * key in `markers` when it runs; `ran()` lists them. Built with plain git before the planted
 * configuration is written, so setting it up runs none of them.
 *
 * The clean filter runs on `*.md` (README.md's committed blob is what the filter made of it,
 * not the bytes on disk: the marker command prefixes each line), the merge driver and the diff
 * driver on `*.ts`; the `evilprocess` filter (a long-running process) is configured, and a test
 * that wants it names it in `.git/info/attributes` (git would fail on it: it is no filter); `src/auth/login.ts` also names the `late` merge driver, which only a branch
 * under `planport/` brings in (`includeIf "onbranch:…"`). `origin` is a promisor remote behind
 * the `ext::` transport, so a missing object would be fetched by running a command.
 *
 * @example
 * const hostile = hostileRepo();
 * await collectTree(hostile.repo);
 * expect(hostile.ran()).toEqual([]);
 */
export interface HostileRepo {
  repo: string;
  markers: string;
  /** The markers left so far (the keys whose command ran), sorted. */
  ran(): string[];
  /** Writes `files` and commits them with plain git, as the user would; forgets its markers. */
  commit(message: string, files: Record<string, string>): void;
}

/** Every hook git documents (githooks(5)), planted in `.git/hooks/` and `core.hooksPath`. */
const HOOKS = [
  "applypatch-msg",
  "pre-applypatch",
  "post-applypatch",
  "pre-commit",
  "pre-merge-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "pre-rebase",
  "post-checkout",
  "post-merge",
  "pre-push",
  "pre-receive",
  "update",
  "proc-receive",
  "post-receive",
  "post-update",
  "reference-transaction",
  "push-to-checkout",
  "pre-auto-gc",
  "post-rewrite",
  "sendemail-validate",
  "fsmonitor-watchman",
  "post-index-change",
];

export function hostileRepo(opts: { hooksPath?: boolean } = {}): HostileRepo {
  const repo = fixtureRepo();
  const markers = mkdtempSync(join(tmpdir(), "planport-markers-"));
  const planted = join(mkdtempSync(join(tmpdir(), "planport-planted-")), "run.sh");
  // Leaves a marker named by its first argument; as a clean filter it also rewrites the file.
  writeFileSync(
    planted,
    [
      "#!/bin/sh",
      `touch "${markers}/$1"`,
      'case "$1" in',
      "  filter.clean) sed 's/^/cleaned: /' ;;",
      "  filter.smudge) cat ;;",
      "esac",
      "exit 0",
      "",
    ].join("\n"),
  );
  chmodSync(planted, 0o755);
  const run = (key: string, extra = "") => `"${planted} ${key}${extra}"`;

  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: repo, stdio: ["ignore", "pipe", "pipe"] });
  writeFileSync(
    join(repo, ".gitattributes"),
    "*.md filter=evil\n*.ts diff=evil merge=evil\nsrc/auth/login.ts merge=late\n",
  );
  const author = ["-c", "user.email=t@example.com", "-c", "user.name=t"];
  git("add", ".gitattributes");
  git(...author, "commit", "-qm", "attributes");
  // README.md as the other machine's clean filter committed it; the bytes on disk stay as they are.
  git("-c", `filter.evil.clean=${planted} filter.clean`, "add", "--renormalize", "README.md");
  git(...author, "commit", "-qm", "filtered");

  const hooks = join(repo, ".git", "hooks");
  const otherHooks = join(repo, ".git", "other-hooks");
  for (const dir of [hooks, otherHooks]) {
    mkdirSync(dir, { recursive: true });
    for (const hook of HOOKS) {
      writeFileSync(join(dir, hook), `#!/bin/sh\nexec ${planted} hook.${hook}\n`);
      chmodSync(join(dir, hook), 0o755);
    }
  }
  writeFileSync(
    join(repo, ".git", "on-branch.config"),
    `[merge "late"]\n\tdriver = ${run("merge.late.driver", " %A")}\n`,
  );
  const config = [
    "[core]",
    "\trepositoryformatversion = 1",
    `\tfsmonitor = ${run("core.fsmonitor")}`,
    ...(opts.hooksPath === true ? ["\thooksPath = .git/other-hooks"] : []),
    `\tpager = ${run("core.pager")}`,
    `\teditor = ${run("core.editor")}`,
    `\tsshCommand = ${run("core.sshCommand")}`,
    `\taskPass = ${run("core.askPass")}`,
    `\tgitProxy = ${run("core.gitProxy")}`,
    `\talternateRefsCommand = ${run("core.alternateRefsCommand")}`,
    `[sequence]\n\teditor = ${run("sequence.editor")}`,
    `[credential]\n\thelper = ${run("credential.helper").replace('"', '"!')}`,
    `[gpg]\n\tprogram = ${run("gpg.program")}`,
    `[gpg "ssh"]\n\tprogram = ${run("gpg.ssh.program")}\n\tdefaultKeyCommand = ${run("gpg.ssh.defaultKeyCommand")}`,
    `[uploadpack]\n\tpackObjectsHook = ${run("uploadpack.packObjectsHook")}`,
    `[diff]\n\texternal = ${run("diff.external")}`,
    `[diff "evil"]\n\ttextconv = ${run("diff.textconv")}\n\tcommand = ${run("diff.command")}`,
    `[filter "evil"]\n\tclean = ${run("filter.clean")}\n\tsmudge = ${run("filter.smudge")}\n\trequired = true`,
    `[filter "evilprocess"]\n\tprocess = ${run("filter.process")}`,
    `[merge "evil"]\n\tname = planted\n\tdriver = ${run("merge.driver", " %A")}`,
    `[pager]\n\tstatus = ${run("pager.status")}\n\tapply = ${run("pager.apply")}`,
    `[hook "planted"]\n\tcommand = ${run("hook.configured")}\n\tevent = post-checkout\n\tevent = post-index-change`,
    "[submodule]\n\trecurse = true",
    "[status]\n\tsubmoduleSummary = true",
    "[protocol]\n\tallow = always",
    // A promisor remote behind `ext::`: a missing object would be fetched by running a command.
    "[extensions]\n\tpartialClone = origin",
    `[remote "origin"]\n\turl = ext::${planted} remote.ext %S\n\tpromisor = true`,
    `\tpartialclonefilter = blob:none\n\tuploadpack = ${run("remote.uploadpack")}`,
    '[includeIf "onbranch:planport/**"]',
    "\tpath = on-branch.config",
    "",
  ].join("\n");
  writeFileSync(join(repo, ".git", "config"), config);
  const forget = () => {
    for (const name of readdirSync(markers)) rmSync(join(markers, name));
  };
  forget();
  // The user's own commit: what their git runs is not planport's doing, so it is forgotten.
  const commit = (message: string, files: Record<string, string>) => {
    for (const [path, content] of Object.entries(files)) writeFileSync(join(repo, path), content);
    git(...author, "commit", "-qam", message);
    forget();
  };
  return {
    repo,
    markers,
    ran: () => (existsSync(markers) ? readdirSync(markers).sort() : []),
    commit,
  };
}
