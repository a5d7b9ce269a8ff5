import { refuse, SettingError } from "./vars.ts";

/**
 * The addresses among the worker's settings: the base of its links and where webhooks go.
 * Neither a credential in a URL nor the webhook secret is ever repeated in a message.
 */

/** Where webhooks go (docs/PROTOCOL.md "Webhooks"). Never log `secret`. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** A shorter secret is refused: it could be guessed, and a signature would prove nothing. */
export const MIN_WEBHOOK_SECRET_CHARS = 16;

/** PLANPORT_PUBLIC_URL: the base of absolute links (origin and path, no trailing slash), or null. */
export function publicUrl(configured: string | undefined): string | null {
  const value = configured?.trim();
  if (value === undefined || value === "") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse("PLANPORT_PUBLIC_URL", value, "a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    refuse("PLANPORT_PUBLIC_URL", value, "an https:// or http:// URL");
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    // Not quoted: credentials, a query or a fragment are where a URL carries secrets.
    throw new SettingError(
      "The server's PLANPORT_PUBLIC_URL is not a plain base URL: it has a query, a fragment or credentials (user:password@); set it to the worker's origin and path only in wrangler.toml (or --var) and restart the worker.",
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/**
 * PLANPORT_WEBHOOK_URL (an http:// or https:// URL without credentials) and
 * PLANPORT_WEBHOOK_SECRET (required with the URL, at least 16 characters; ignored without
 * it). Neither value is ever repeated in a message: the URL of a chat webhook is itself a
 * credential, and the secret is one.
 */
export function webhookTarget(url: string | null, secret: string | null): WebhookTarget | null {
  if (url === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_URL is not a URL; set it to an https:// (or http://) address in wrangler.toml (or --var) and restart the worker.",
    );
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    // Not even the scheme is quoted: a value with no scheme reads as one up to its first ":".
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_URL is not an https:// or http:// URL; fix it in wrangler.toml (or --var) and restart the worker.",
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_URL holds credentials (user:password@), which are not sent; put a token in the path or query instead, fix it in wrangler.toml (or --var) and restart the worker.",
    );
  }
  if (secret === null) {
    throw new SettingError(
      "The server's PLANPORT_WEBHOOK_SECRET is not set, but PLANPORT_WEBHOOK_URL is: every webhook is signed with it; set it with `wrangler secret put PLANPORT_WEBHOOK_SECRET` (or --var) and restart the worker.",
    );
  }
  if (secret.length < MIN_WEBHOOK_SECRET_CHARS) {
    throw new SettingError(
      `The server's PLANPORT_WEBHOOK_SECRET has ${secret.length} characters, which is fewer than ${MIN_WEBHOOK_SECRET_CHARS}; set a longer one (e.g. \`openssl rand -hex 32\`) and restart the worker.`,
    );
  }
  return { url: parsed.href, secret };
}
