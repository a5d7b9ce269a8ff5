/**
 * Where things are inside the image (container/Dockerfile makes them). The workspace is what
 * commands see; the runner's own state (the git baseline, incoming tars) sits under a
 * root-only folder that commands cannot read.
 */
export const WORKSPACE_DIR = "/workspace";
export const STATE_DIR = "/var/lib/planport";
export const GIT_DIR = `${STATE_DIR}/git`;
export const GIT_CONFIG_FILE = `${STATE_DIR}/gitconfig`;
/** Touched by every workspace and run: `idle` measures quiet time from it. */
export const ACTIVITY_FILE = `${STATE_DIR}/last-activity`;
/** The user commands run as (the Dockerfile's `planport`). */
export const COMMAND_UID = 1000;
export const COMMAND_GID = 1000;
export const COMMAND_HOME = "/home/planport";
/** The largest workspace tar accepted (the snapshot's own limit is 100 MiB uncompressed). */
export const WORKSPACE_MAX_BYTES = 512 * 1024 * 1024;
/** Past this many bytes of changed files' contents in one run, further files are "too_large". */
export const CHANGES_MAX_TOTAL_BYTES = 32 * 1024 * 1024;
