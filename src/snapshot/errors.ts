import {
  MANIFEST_MAX_BYTES,
  SNAPSHOT_MAX_COMPRESSED_BYTES,
  SNAPSHOT_MAX_FILES,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
} from "../protocol/index.ts";

/** A refused upload: the HTTP status, the protocol's error code and a sentence the user can act on. */
export type IngestError = {
  status: 400 | 409 | 413;
  code:
    | "invalid_body"
    | "invalid_manifest"
    | "unknown_snapshot"
    | "blobs_missing"
    | "payload_too_large"
    | "snapshot_too_large"
    | "snapshot_too_many_files";
  message: string;
  /** `blobs_missing`: the ids to send (docs/PROTOCOL.md "Incremental snapshots"). */
  missing?: string[];
};

/**
 * Thrown inside the ingest pipeline to stop it (a limit was crossed, the body is not a
 * tar.gz) and caught at its edge, where it becomes the `{ok: false, error}` answer.
 */
export class IngestFailure extends Error {
  constructor(readonly error: IngestError) {
    super(error.message);
    this.name = "IngestFailure";
  }
}

const MIB = 1024 * 1024;

export function payloadTooLarge(): IngestFailure {
  return new IngestFailure({
    status: 413,
    code: "payload_too_large",
    message: `The snapshot upload is larger than ${SNAPSHOT_MAX_COMPRESSED_BYTES / MIB} MiB compressed. Add large or generated files to .gitignore and try again.`,
  });
}

export function snapshotTooLarge(): IngestFailure {
  return new IngestFailure({
    status: 413,
    code: "snapshot_too_large",
    message: `The snapshot expands to more than ${SNAPSHOT_MAX_UNCOMPRESSED_BYTES / MIB} MiB uncompressed; reading stopped there. Add large or generated files to .gitignore and try again.`,
  });
}

export function tooManyFiles(): IngestFailure {
  return new IngestFailure({
    status: 413,
    code: "snapshot_too_many_files",
    message: `The snapshot has more than ${SNAPSHOT_MAX_FILES.toLocaleString("en-US")} files (every archive entry except folders counts). Add generated or vendored folders to .gitignore and try again.`,
  });
}

export function emptyBody(): IngestFailure {
  return invalidBody("The request body is empty; send the repository as a tar.gz archive.");
}

export function plainTar(): IngestFailure {
  return invalidBody(
    "The request body is an uncompressed tar archive; gzip it and send the tar.gz archive.",
  );
}

export function notGzip(cause: unknown): IngestFailure {
  return invalidBody(
    `The request body is not valid gzip data (${describe(cause)}); send the repository as a tar.gz archive.`,
  );
}

export function notTar(cause: unknown): IngestFailure {
  return invalidBody(
    `The gzip data does not hold a valid tar archive (${describe(cause)}); send the repository as a tar.gz archive.`,
  );
}

export function invalidManifest(message: string): IngestFailure {
  return new IngestFailure({ status: 400, code: "invalid_manifest", message });
}

export function manifestTooLarge(): IngestFailure {
  return new IngestFailure({
    status: 413,
    code: "payload_too_large",
    message: `The manifest is larger than ${MANIFEST_MAX_BYTES / MIB} MiB of JSON, more than 20,000 files with paths of 350 bytes need; add generated or vendored folders to .gitignore and try again.`,
  });
}

export function invalidBlob(message: string): IngestFailure {
  return invalidBody(message);
}

function invalidBody(message: string): IngestFailure {
  return new IngestFailure({ status: 400, code: "invalid_body", message });
}

function describe(cause: unknown): string {
  const text = cause instanceof Error ? cause.message : String(cause);
  return text.replace(/\.$/, "").slice(0, 200);
}
