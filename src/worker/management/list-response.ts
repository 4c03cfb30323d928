import { z } from "zod";
import { problem } from "../../shared/errors";
import type { CursorKey } from "../../shared/pagination/cursor";
import { checkpointPage, type ListOptions, offsetPage, parseListQuery } from "../../shared/pagination/list-query";
import type { ListPage, ListWindow } from "../../shared/types";
import type { AppContext } from "../context";

/** Query parameters every list route documents (SPEC §4.3). */
export const LIST_QUERY = z.looseObject({
  page: z.string().optional().describe("0-based page (offset mode)"),
  per_page: z.string().optional().describe("1-100, default 50"),
  include_totals: z.string().optional().describe("true|false: envelope {start, limit, length, total, <items>}"),
  from: z.string().optional().describe("checkpoint cursor (checkpoint mode)"),
  take: z.string().optional().describe("1-100, default 50 (checkpoint mode)"),
});

/**
 * A list route in either pagination mode (SPEC §4.3): offset gives a bare array (or the totals envelope),
 * checkpoint gives {<field>, next?}. Records are fetched newest first and presented after paging.
 */
export async function listResponse<R extends { created_at: string }, P>(
  c: AppContext,
  field: string,
  fetch: (window: ListWindow) => Promise<ListPage<R>>,
  id: (record: R) => string,
  present: (record: R) => P | Promise<P>,
  options: ListOptions = { checkpoint: true },
): Promise<Response> {
  const q = parseListQuery(c.req.query(), options);
  if (q.mode === "offset") {
    const { items, total } = await fetch({ offset: q.page * q.perPage, limit: q.perPage });
    return c.json(offsetPage(field, await Promise.all(items.map(present)), q, total ?? items.length));
  }
  const createdAt = Number(q.after?.key);
  if (q.after && !Number.isSafeInteger(createdAt)) throw problem("invalid_cursor");
  const after = q.after ? { createdAt, id: q.after.id } : null;
  const { items } = await fetch({ after, limit: q.take + 1 });
  const position = (record: R): CursorKey => ({ key: Date.parse(record.created_at), id: id(record) });
  const body = checkpointPage(field, items, q, position);
  body[field] = await Promise.all((body[field] as R[]).map(present));
  return c.json(body);
}

/**
 * The `fields` / `include_fields` projection of the reference platform: with fields given, keep only them
 * (include_fields true, the default) or drop them (false). Unknown field names are ignored.
 */
export function projection(c: AppContext): (<T extends object>(record: T) => Partial<T>) {
  const fields = (c.req.query("fields") ?? "").split(",").map((f) => f.trim()).filter(Boolean);
  const include = c.req.query("include_fields");
  if (include !== undefined && include !== "true" && include !== "false") {
    throw problem("invalid_query_string", { detail: "include_fields must be true or false" });
  }
  if (!fields.length) return (record) => record;
  const keep = include !== "false";
  return (record) => Object.fromEntries(Object.entries(record).filter(([key]) => fields.includes(key) === keep)) as never;
}
