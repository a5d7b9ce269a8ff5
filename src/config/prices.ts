import { z } from "zod";
import { refuse } from "./vars.ts";

/** What a model's tokens cost, in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Input read from the provider's prompt cache. */
  cache_read: number;
  /** Input written to the provider's prompt cache. */
  cache_write: number;
}

/** Dollars per million tokens; far above any real price, so a misplaced factor is caught. */
const MAX_PRICE_PER_MTOK = 10_000;

const PriceNumber = z.number().min(0).max(MAX_PRICE_PER_MTOK);
const PriceEntry = z.strictObject({
  input: PriceNumber,
  output: PriceNumber,
  cache_read: PriceNumber.optional(),
  cache_write: PriceNumber.optional(),
});
const PricesSchema = z.record(z.string().min(1).max(200), PriceEntry);

/**
 * PLANPORT_PRICES: a JSON object of model name → `{"input", "output", "cache_read"?,
 * "cache_write"?}` in dollars per million tokens. A cache price left out is the input price
 * (no discount or surcharge known).
 */
export function prices(value: string | null): Record<string, ModelPrice> {
  if (value === null) return {};
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return refuse("PLANPORT_PRICES", value, "JSON");
  }
  const parsed = PricesSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (at ${issue.path.join(".")})` : "";
    return refuse(
      "PLANPORT_PRICES",
      value.length > 200 ? `${value.slice(0, 200)}…` : value,
      `a JSON object of model name → {"input", "output", "cache_read"?, "cache_write"?}, each in dollars per million tokens from 0 to ${MAX_PRICE_PER_MTOK}${where}`,
    );
  }
  return Object.fromEntries(
    Object.entries(parsed.data).map(([model, p]) => [
      model,
      {
        input: p.input,
        output: p.output,
        cache_read: p.cache_read ?? p.input,
        cache_write: p.cache_write ?? p.input,
      },
    ]),
  );
}
