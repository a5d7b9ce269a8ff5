import { createApp } from "./api/app.ts";

export { CommandContainer } from "./execution/cloudflare-container.ts";
export { OwnerIndex } from "./owner/owner-index.ts";
export { SessionObject } from "./session/session-object.ts";

/** The worker: the planport HTTP API (`src/api/`), with one Durable Object per session and per owner. */
const app = createApp();

export default app;
