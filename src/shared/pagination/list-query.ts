import { z } from "zod";
import { problem } from "../errors";
import { type CursorKey, decodeCursor, encodeCursor } from "./cursor";

/** SPEC §4.3: offset mode (page, per_page, include_totals) or checkpoint mode (from, take). */
export type ListQuery =
  | { mode: "offset"; page: number; perPage: number; includeTotals: boolean; sort: string }
  | { mode: "checkpoint"; after: CursorKey | null; take: number; sort: string };

export interface ListOptions {
  /** Whether this endpoint supports checkpoint mode (SPEC §4.3 list). */
  checkpoint: boolean;
  /**
   * The endpoint pages by checkpoint only (GET /refresh-tokens): without from/take it is still checkpoint
   * mode with the default take, never an offset page.
   * @default false
   */
  checkpointOnly?: boolean;
  /** @default 50 */
  defaultPerPage?: number;
  /** @default 100 */
  maxPerPage?: number;
  /** Sorts the endpoint honours; the first is the default. Any other value is a 400. */
  sorts?: string[];
}

const intParam = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a non-negative integer`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`);

const boolParam = z.enum(["true", "false"], { message: "include_totals must be true or false" });

/** Reads the pagination parameters of a list request, with clear 400s for bad values. */
export function parseListQuery(query: Record<string, string | undefined>, options: ListOptions): ListQuery {
  const max = options.maxPerPage ?? 100;
  const sorts = options.sorts ?? ["created_at:-1"];
  const sort = query.sort ?? sorts[0] ?? "";
  if (query.sort !== undefined && !sorts.includes(query.sort)) {
    throw problem("unsupported_sort", { sort: query.sort, supported: sorts.join(", ") });
  }
  const read = <T>(schema: z.ZodType<T>, value: string | undefined, fallback: T): T => {
    if (value === undefined) return fallback;
    const result = schema.safeParse(value);
    if (!result.success) throw problem("invalid_query_string", { detail: result.error.issues[0]?.message ?? "Invalid query" });
    return result.data;
  };
  const isCheckpoint = options.checkpoint && (options.checkpointOnly || query.from !== undefined || query.take !== undefined);
  if (isCheckpoint) {
    const take = read(intParam("take", 1, max), query.take, options.defaultPerPage ?? 50);
    const after = query.from ? decodeCursor(query.from, sort) : null;
    return { mode: "checkpoint", after, take, sort };
  }
  return {
    mode: "offset",
    page: read(intParam("page", 0, 1_000_000), query.page, 0),
    perPage: read(intParam("per_page", 1, max), query.per_page, options.defaultPerPage ?? 50),
    includeTotals: read(boolParam, query.include_totals, "false") === "true",
    sort,
  };
}

/** Offset response: a bare array, or with include_totals the envelope {start, limit, length, total, items}. */
export function offsetPage<T>(field: string, items: T[], q: Extract<ListQuery, { mode: "offset" }>, total: number) {
  if (!q.includeTotals) return items;
  return { start: q.page * q.perPage, limit: q.perPage, length: items.length, total, [field]: items };
}

/**
 * Checkpoint response: {items, next?}. Callers fetch take + 1 rows; `next` is present only when a further
 * row exists, so the last page carries no cursor.
 */
export function checkpointPage<T>(
  field: string,
  rows: T[],
  q: Extract<ListQuery, { mode: "checkpoint" }>,
  position: (item: T) => CursorKey,
) {
  const items = rows.slice(0, q.take);
  const last = items[items.length - 1];
  const body: Record<string, unknown> = { [field]: items };
  if (rows.length > q.take && last !== undefined) body.next = encodeCursor(q.sort, position(last));
  return body;
}
