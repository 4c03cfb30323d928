import type { ConsoleContext } from "../context";

/** The statuses a console screen answers with after an API call (the API's own, where it refused). */
export type Status = 200 | 201 | 400 | 403 | 404 | 409 | 413;

/** The page status for an API refusal: 403, 404, 409 and 413 (a file over the limit) as the API said, anything else 400. */
export const statusOf = (s: number): Status => (s === 403 || s === 404 || s === 409 || s === 413 ? s : 400);

/** What a write did, shown on the page it returns to. */
export interface Outcome {
  error?: string | null;
  notice?: string;
  status?: Status;
}

/** The outcome of an API answer: the notice when it succeeded, the API's message and status when it refused. */
export const outcomeOf = (result: { ok: boolean; status: number; error: string | null }, notice: string): Outcome =>
  result.ok ? { notice } : { error: result.error, status: statusOf(result.status) };

/** The tenant a console screen is for (its `:tenant` path parameter). */
export const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;

/**
 * A number field's value for the API: the number, or the text as typed when it is not one (the API then
 * refuses it with its own message; `Number("x")` would send null, which removes a setting).
 */
export function numeric(text: string): number | string {
  const n = Number(text);
  return text.trim() !== "" && Number.isFinite(n) ? n : text;
}

/** A screen's status from the reads it made: 200, or the first refusal's (403 for an operator without the read scope). */
export const readStatus = (...reads: ({ ok: boolean; status: number } | undefined)[]): Status => {
  const failed = reads.find((r) => r && !r.ok);
  return failed ? statusOf(failed.status) : 200;
};
