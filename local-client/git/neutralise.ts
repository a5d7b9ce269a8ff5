import { err, ok, type Result } from "../../src/protocol/index.ts";
import { type ConfigEntry, cameWithRepository, configKeyParts } from "./config-listing.ts";

/**
 * Which configuration to set on the command line so that git, run in a repository someone else
 * prepared (a tarball, a zip, a shared drive: its `.git/` came along), never runs a command that
 * repository's configuration names. Pure: from the entries git would read to the overrides.
 *
 * Command-line configuration (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`) is read after every file, so
 * it wins over the repository's. Three kinds of protection, each total within its mechanism:
 * - keys with one fixed name are always overridden ({@link ALWAYS_SET}), whatever the files say;
 * - per-driver keys (`filter.<driver>.clean`, `merge.<driver>.driver`, `hook.<name>.command`…)
 *   are overridden for every driver the repository defines: the names come from the same files
 *   git reads, so git cannot know a driver this list missed;
 * - the rest is out of reach: the runner starts only a few of git's own commands with flags
 *   that keep them from the rest ({@link ../git/run.ts}), and with no transport allowed at all
 *   (`GIT_ALLOW_PROTOCOL` empty), so ssh commands, proxies, credential helpers, remote helpers
 *   and lazy fetches cannot start.
 * A key the repository sets in one of git's own sections whose name looks like a command and
 * that no rule here covers (a newer git's, say) refuses the run: unknown fails closed.
 */

/** A key and value to set on git's command line. */
export interface ConfigOverride {
  key: string;
  value: string;
}

/** A repository key no rule covers that may name a command; where it was set. */
export interface UncoveredKey {
  key: string;
  origin: string;
}

/**
 * git's own three-way text merge, run as a merge driver: what `git apply --3way` does for a file
 * with no merge attribute (same labels, same marker size, `merge.conflictStyle` honoured). A
 * repository's driver is replaced by it; there is no setting that restores the built-in one.
 */
export const BUILTIN_TEXT_MERGE =
  "git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B";

/**
 * Set on every run. `:` and `cat` are the values git itself treats as "no editor" and "no
 * pager" without starting anything; hooks are looked up in a path that cannot be a folder.
 */
export const ALWAYS_SET: readonly ConfigOverride[] = [
  // The fsmonitor hook (or daemon) runs whenever git reads the index.
  { key: "core.fsmonitor", value: "false" },
  // Hooks: `.git/hooks/` is the repository's too; git finds none under /dev/null.
  { key: "core.hooksPath", value: "/dev/null" },
  { key: "core.pager", value: "cat" },
  { key: "core.editor", value: ":" },
  { key: "sequence.editor", value: ":" },
  { key: "core.askPass", value: "" },
  // An empty helper empties the list of helpers read so far.
  { key: "credential.helper", value: "" },
  { key: "protocol.allow", value: "never" },
  // A submodule's git would read the submodule's own configuration, which is not listed here.
  { key: "submodule.recurse", value: "false" },
  { key: "status.submoduleSummary", value: "false" },
];

type Coverage =
  | { kind: "per-driver"; overrides: (subsection: string) => ConfigOverride[] }
  | { kind: "always-set" }
  | { kind: "unreachable"; why: string }
  | { kind: "not-a-command" };

interface Rule {
  /** Matched against the key with its section and name lowercased. */
  key: RegExp;
  coverage: Coverage;
}

const NO_TRANSPORT = "only a transport runs it, and the runner allows none";
const NEVER_RUN = "only git commands the runner never starts read it";
const NO_DIFF_TEXT =
  "only diff text output runs it: the runner's diffs are --no-ext-diff --no-textconv";

/** Every command-bearing key git documents (2.39 to 2.55), and look-alikes that name none. */
const RULES: readonly Rule[] = [
  {
    key: /^filter\..+\.[a-z0-9-]+$/,
    coverage: {
      kind: "per-driver",
      // Empty commands are "no filter" (convert.c apply_filter); required=false keeps a file
      // whose filter is off from being an error.
      overrides: (d) => [
        { key: `filter.${d}.clean`, value: "" },
        { key: `filter.${d}.smudge`, value: "" },
        { key: `filter.${d}.process`, value: "" },
        { key: `filter.${d}.required`, value: "false" },
      ],
    },
  },
  {
    // `git apply --3way` runs merge drivers (merge-ll.c ll_ext_merge).
    key: /^merge\..+\.[a-z0-9-]+$/,
    coverage: {
      kind: "per-driver",
      overrides: (d) => [{ key: `merge.${d}.driver`, value: BUILTIN_TEXT_MERGE }],
    },
  },
  {
    // Configured hooks (git 2.5x): disabled by name; hooks from files are under core.hooksPath.
    key: /^hook\..+\.[a-z0-9-]+$/,
    coverage: {
      kind: "per-driver",
      overrides: (name) => [{ key: `hook.${name}.enabled`, value: "false" }],
    },
  },
  {
    key: /^pager\..+$/,
    coverage: { kind: "unreachable", why: "every run is --no-pager with stdout not a terminal" },
  },
  {
    key: /^core\.(fsmonitor|hookspath|pager|editor|askpass)$|^sequence\.editor$|^credential\.helper$/,
    coverage: { kind: "always-set" },
  },
  { key: /^credential\..+\.helper$/, coverage: { kind: "unreachable", why: NO_TRANSPORT } },
  {
    key: /^core\.(sshcommand|gitproxy|alternaterefscommand)$|^remote\..+\.(uploadpack|receivepack|vcs|proxy|proxyauthmethod|partialclonefilter)$|^http\.|^ssh\.variant$|^uploadpack\.|^uploadpackfilter\.|^imap\.tunnel$/,
    coverage: { kind: "unreachable", why: NO_TRANSPORT },
  },
  {
    key: /^diff\.(external|.+\.(command|textconv|cachetextconv))$/,
    coverage: { kind: "unreachable", why: NO_DIFF_TEXT },
  },
  {
    key: /^(difftool|mergetool|guitool|browser|man|sendemail|instaweb|gitcvs|trailer|gpg|alias)\.|^(diff|merge)\.(gui)?tool$|^(web|help)\.browser$|^interactive\.difffilter$|^gc\.recentobjectshook$|^submodule\..+\.update$|^(commit|tag|push)\.gpgsign$/,
    coverage: { kind: "unreachable", why: NEVER_RUN },
  },
  {
    // Names that look like commands and are not: settings, paths read, switches.
    key: /^(advice|completion|fsmonitor|uploadpack|color|column)\.|^core\.fsmonitorhookversion$|^clean\.requireforce$|^clone\.filtersubmodules$|^commit\.cleanup$|^commitgraph\.maxnewfilters$|^rebase\.(abbreviatecommands|rescheduleFailedExec)$|^notes\.rewrite\.|^gc\.repackfilter(to)?$|^branch\..+\.description$|^gitweb\.description$|^format\.coverfromdescription$|^diff\..+\.(binary|wordregex|xfuncname|trustexitcode)$|^difftool\.(prompt|trustexitcode|guidefault)$/i,
    coverage: { kind: "not-a-command" },
  },
];

/** Sections git reads (from `git help --config` and git's documentation, 2.39 to 2.55). */
const GIT_SECTIONS: ReadonlySet<string> = new Set(
  (
    "add advice alias am apply attr author bitmappseudomerge blame branch browser bundle checkout " +
    "clean clone color column commit commitgraph committer completion core credential " +
    "credentialcache credentialstore diff difftool extensions fastimport feature fetch filter " +
    "fmt-merge-msg format fsck fsmonitor gc gitcvs gitweb gpg grep gui guitool help hook http " +
    "i18n imap include includeif index init instaweb interactive log lsrefs mailinfo mailmap " +
    "maintenance man merge mergetool notes pack pager pretty promisor protocol pull push rebase " +
    "receive reftable remote remotes repack replay rerere revert safe sendemail sequence " +
    "sequencer showbranch sideband sparse splitindex ssh stash status submodule tag tar trace2 " +
    "trailer transfer uploadarchive uploadpack uploadpackfilter url user versionsort web worktree"
  ).split(" "),
);

/** A name that may be a command: what every command-bearing key git documents is called. */
const COMMAND_LIKE =
  /cmd|command|program|hook|driver|helper|editor|pager|textconv|clean|smudge|process|askpass|fsmonitor|proxy|tool|exec|filter|sendmail|tunnel|browser|uploadpack|receivepack|vcs|shell|script/;

/**
 * The rule covering `key` (lowercased section and name), or null.
 *
 * @example
 * coverageOf("filter.lfs.clean")?.kind // "per-driver"
 */
export function coverageOf(key: string): Coverage | null {
  const { section, subsection, name } = configKeyParts(key);
  const normal = subsection === null ? `${section}.${name}` : `${section}.${subsection}.${name}`;
  return RULES.find((rule) => rule.key.test(normal))?.coverage ?? null;
}

/**
 * True for a key git itself may read (its section is one of git's) whose name looks like a
 * command: what must be covered by a rule before git runs.
 *
 * @example
 * mayNameCommand("core.somethingCommand") // true
 * mayNameCommand("lfs.repositoryformatversion") // false: git never reads the lfs section
 */
export function mayNameCommand(key: string): boolean {
  const { section, name } = configKeyParts(key);
  return GIT_SECTIONS.has(section) && COMMAND_LIKE.test(name);
}

/**
 * The overrides for a run, given the entries git would read: {@link ALWAYS_SET} and those for
 * each driver the repository defines; or the repository's keys no rule covers that may name
 * a command (then git must not run).
 *
 * @example
 * neutralisingOverrides([{ scope: "local", origin: "file:.git/config", key: "filter.x.clean", value: "./run" }])
 * // ok([...ALWAYS_SET, { key: "filter.x.clean", value: "" }, …, { key: "filter.x.required", value: "false" }])
 */
export function neutralisingOverrides(
  entries: readonly ConfigEntry[],
): Result<ConfigOverride[], UncoveredKey[]> {
  const overrides: ConfigOverride[] = [...ALWAYS_SET];
  const done = new Set<string>();
  const uncovered: UncoveredKey[] = [];
  for (const entry of entries) {
    if (!cameWithRepository(entry)) continue;
    const coverage = coverageOf(entry.key);
    if (coverage === null) {
      if (mayNameCommand(entry.key)) uncovered.push({ key: entry.key, origin: entry.origin });
      continue;
    }
    if (coverage.kind !== "per-driver") continue;
    const { section, subsection } = configKeyParts(entry.key);
    const driver = `${section}.${subsection}`;
    if (subsection === null || done.has(driver)) continue;
    done.add(driver);
    overrides.push(...coverage.overrides(subsection));
  }
  return uncovered.length > 0 ? err(uncovered) : ok(overrides);
}
