import { Hono } from "hono";
import { SNAPSHOT_ID_PATTERN, SNAPSHOT_MAX_COMPRESSED_BYTES } from "../protocol/index.ts";
import { ingestSnapshot, payloadTooLarge, snapshotExists } from "../snapshot/index.ts";
import { type AppEnv, requireOwner } from "./auth.ts";
import { sendError, sendFailure } from "./errors.ts";
import { limitPerOwner } from "./rate-limit.ts";
import { mediaType } from "./validate.ts";

/**
 * Repository snapshots (docs/PROTOCOL.md "HTTP API"): upload a tar.gz, and ask whether this owner has
 * already uploaded one (the client skips the upload then). The snapshot module enforces the
 * size and file limits while it streams the body.
 */
export const snapshotRoutes = new Hono<AppEnv>();

const GZIP_TYPES = ["application/gzip", "application/x-gzip"];

snapshotRoutes.post("/v1/snapshots", requireOwner, limitPerOwner("uploads"), async (c) => {
  const owner = c.get("owner");
  if (!GZIP_TYPES.includes(mediaType(c))) {
    return sendFailure(
      c,
      400,
      "invalid_body",
      "Send the snapshot as a tar.gz body with the header Content-Type: application/gzip.",
    );
  }
  // A body declared too large is refused before a byte of it is read (no wasted transfer, and
  // the connection stays usable: see OVERSIZED_BODY_DRAIN_BYTES in the snapshot ingest).
  if (Number(c.req.header("content-length")) > SNAPSHOT_MAX_COMPRESSED_BYTES) {
    return sendError(c, payloadTooLarge().error);
  }
  const body = c.req.raw.body;
  if (body === null) {
    return sendFailure(
      c,
      400,
      "invalid_body",
      "The body is empty; send the repository as a tar.gz.",
    );
  }
  const ingested = await ingestSnapshot(c.env.SNAPSHOTS, owner, body);
  if (!ingested.ok) return sendError(c, ingested.error);
  return c.json(ingested.value, 201);
});

// HEAD is served by this GET route (Hono answers HEAD with the GET response, minus the body).
snapshotRoutes.get("/v1/snapshots/:id", requireOwner, async (c) => {
  const owner = c.get("owner");
  const id = c.req.param("id");
  // An id that is not a sha256 was never uploaded: the same 404 as an unknown one.
  if (!SNAPSHOT_ID_PATTERN.test(id) || !(await snapshotExists(c.env.SNAPSHOTS, owner, id))) {
    return sendFailure(c, 404, "not_found", "You have not uploaded a snapshot with this id.");
  }
  return c.json({ id }, 200);
});
