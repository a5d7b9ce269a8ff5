import { Hono } from "hono";
import { snapshotRegistry } from "../owner/stub.ts";
import {
  MissingBlobsRequestSchema,
  SNAPSHOT_ID_PATTERN,
  SNAPSHOT_MAX_COMPRESSED_BYTES,
} from "../protocol/index.ts";
import {
  commitManifest,
  type IngestError,
  ingestBlobs,
  ingestSnapshot,
  payloadTooLarge,
} from "../snapshot/index.ts";
import type { AppEnv } from "./app-env.ts";
import { requireOwner } from "./auth.ts";
import { bodyLimit } from "./body-limits.ts";
import { sendError, sendFailure } from "./errors.ts";
import { limitPerOwner } from "./rate-limit.ts";
import { mediaType, readJson } from "./validate.ts";

/**
 * Repository snapshots (docs/PROTOCOL.md "HTTP API" and "Incremental snapshots"): upload a
 * whole tar.gz, or — what the client does — ask which blobs are missing, upload those, and
 * commit the tree's manifest; and ask whether this owner has a snapshot (the client skips
 * everything then). The snapshot module enforces the limits while it streams the bodies.
 */
export const snapshotRoutes = new Hono<AppEnv>();

const GZIP_TYPES = ["application/gzip", "application/x-gzip"];

snapshotRoutes.post("/v1/snapshots", requireOwner, limitPerOwner("uploads"), async (c) => {
  const owner = c.get("owner");
  const body = gzipBody(c.req.raw, mediaType(c));
  if (!body.ok) return sendError(c, body.error);
  const ingested = await ingestSnapshot(
    c.env.SNAPSHOTS,
    snapshotRegistry(c.env, owner),
    owner,
    body.value,
  );
  if (!ingested.ok) return sendIngestError(c, ingested.error);
  return c.json(ingested.value, 201);
});

snapshotRoutes.post("/v1/blobs/missing", requireOwner, async (c) => {
  const owner = c.get("owner");
  const request = await readJson(c, MissingBlobsRequestSchema, bodyLimit("blobs"));
  if (!request.ok) return sendError(c, request.error);
  const missing = await snapshotRegistry(c.env, owner).missingBlobs(request.value.blobs);
  return c.json({ missing }, 200);
});

snapshotRoutes.post("/v1/blobs", requireOwner, limitPerOwner("uploads"), async (c) => {
  const owner = c.get("owner");
  const body = gzipBody(c.req.raw, mediaType(c));
  if (!body.ok) return sendError(c, body.error);
  const stored = await ingestBlobs(
    c.env.SNAPSHOTS,
    snapshotRegistry(c.env, owner),
    owner,
    body.value,
  );
  if (!stored.ok) return sendIngestError(c, stored.error);
  return c.json(stored.value, 201);
});

snapshotRoutes.post("/v1/snapshots/manifest", requireOwner, limitPerOwner("uploads"), async (c) => {
  const owner = c.get("owner");
  const type = mediaType(c);
  if (type !== "application/json" && !GZIP_TYPES.includes(type)) {
    return sendFailure(
      c,
      400,
      "invalid_body",
      "Send the manifest as JSON (Content-Type: application/json, gzip-compressed or not).",
    );
  }
  const body = sizedBody(c.req.raw);
  if (!body.ok) return sendError(c, body.error);
  const committed = await commitManifest(
    c.env.SNAPSHOTS,
    snapshotRegistry(c.env, owner),
    owner,
    body.value,
  );
  if (!committed.ok) return sendIngestError(c, committed.error);
  return c.json(committed.value, 201);
});

// HEAD is served by this GET route (Hono answers HEAD with the GET response, minus the body).
snapshotRoutes.get("/v1/snapshots/:id", requireOwner, async (c) => {
  const owner = c.get("owner");
  const id = c.req.param("id");
  // An id that is not a sha256 was never uploaded: the same 404 as an unknown one.
  if (!SNAPSHOT_ID_PATTERN.test(id) || !(await snapshotRegistry(c.env, owner).hasSnapshot(id))) {
    return sendFailure(c, 404, "not_found", "You have not uploaded a snapshot with this id.");
  }
  return c.json({ id }, 200);
});

type BodyResult =
  | { ok: true; value: ReadableStream<Uint8Array> }
  | { ok: false; error: IngestError };

/** A tar.gz body: the right type, not declared too large, not empty. */
function gzipBody(request: Request, type: string): BodyResult {
  if (!GZIP_TYPES.includes(type)) {
    return {
      ok: false,
      error: {
        status: 400,
        code: "invalid_body",
        message: "Send the body as a tar.gz with the header Content-Type: application/gzip.",
      },
    };
  }
  return sizedBody(request);
}

/**
 * A body not declared over the upload limit (refused before a byte of it is read: no wasted
 * transfer, and the connection stays usable — see OVERSIZED_BODY_DRAIN_BYTES in
 * src/request-body.ts) and not empty.
 */
function sizedBody(request: Request): BodyResult {
  if (Number(request.headers.get("content-length")) > SNAPSHOT_MAX_COMPRESSED_BYTES) {
    return { ok: false, error: payloadTooLarge().error };
  }
  if (request.body === null) {
    return {
      ok: false,
      error: {
        status: 400,
        code: "invalid_body",
        message: "The body is empty; send the repository as a tar.gz.",
      },
    };
  }
  return { ok: true, value: request.body };
}

/** A refused upload; `blobs_missing` carries the ids to send beside the error. */
function sendIngestError(c: Parameters<typeof sendError>[0], error: IngestError): Response {
  if (error.missing === undefined) return sendError(c, error);
  return c.json(
    { error: { code: error.code, message: error.message }, missing: error.missing },
    error.status,
  );
}
