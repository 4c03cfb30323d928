import type { z } from "zod";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { problem, type Result, unwrap } from "../../shared/errors";
import type { CursorKey } from "../../shared/pagination/cursor";
import { checkpointPage, type ListQuery, offsetPage, parseListQuery } from "../../shared/pagination/list-query";
import type { ListPage } from "../../shared/types";
import type { AppContext } from "../context";
import { defineRoute, type ManagementRoute, type PathParams } from "./define";
import { LIST_QUERY } from "./list-response";

/**
 * The route shapes of a relation between two resources (a role's permissions and users, a user's roles and
 * permissions, an organization's members and their roles): a list of what one side holds, and the POST /
 * DELETE pair that assigns and removes with one body (SPEC §4.2, §4.3). What differs between relations (the
 * paging mode, a page cap, the cursor's position, a control-plane hook after a write) is an option here; a
 * route that truly differs stays a plain `defineRoute`.
 */

type OffsetQuery = Extract<ListQuery, { mode: "offset" }>;

type OffsetWindow = { offset: number; limit: number };

/**
 * The window a list asks its object for: an offset window, or (with checkpoint paging, `A` the position's
 * type) the position after which a checkpoint page starts.
 */
export type RelationWindow<A> = [A] extends [never] ? OffsetWindow : OffsetWindow | { after: A | null; limit: number };

/** Checkpoint paging of a relation list (omitted: offset paging only, from/take ignored). */
export interface RelationCheckpoint<R, A> {
  /** Reads the paging parameters (the list's fixed order, a cap on take/per_page, a refused sort ...). */
  parse(c: AppContext): ListQuery;
  /** The object's `after` position of a decoded cursor; a cursor of another shape throws `invalid_cursor`. */
  after(cursor: CursorKey): A;
  /** The cursor position of a record (the last of a page). */
  position(record: R): CursorKey;
}

export interface RelationList<P extends string, R, A> {
  path: P;
  scope: string;
  summary: string;
  /** Query schema (default LIST_QUERY). */
  query?: z.ZodType;
  /** The field of the totals envelope and of a checkpoint page. */
  field: string;
  checkpoint?: RelationCheckpoint<R, A>;
  /**
   * Prepares the presenter of a page, before anything is fetched (where a route checks a scope or a
   * projection first); it then presents the page's records.
   */
  present(c: AppContext, params: PathParams<P>): (records: R[]) => unknown[] | Promise<unknown[]>;
  /** One page from the object (unwrapped: a missing resource throws its problem). */
  fetch(c: AppContext, params: PathParams<P>, window: RelationWindow<A>): Promise<ListPage<R>>;
}

/** Each record presented alone. */
export const each =
  <R>(present: (record: R) => unknown) =>
  () =>
  (records: R[]) =>
    records.map(present);

/** Offset-only paging parameters of a sub-list (SPEC §4.3: page 0-based, per_page 1-100, default 50; from/take ignored). */
export function offsetQuery(c: AppContext): OffsetQuery {
  const q = parseListQuery(c.req.query(), { checkpoint: false });
  if (q.mode !== "offset") throw problem("checkpoint_unsupported");
  return q;
}

/** GET of a relation list, offset paging (bare array or totals envelope) and, if given, checkpoint paging. */
export function relationListRoute<P extends string, R, A = never>(spec: RelationList<P, R, A>): ManagementRoute {
  return defineRoute({
    method: "get",
    path: spec.path,
    scope: spec.scope,
    summary: spec.summary,
    query: spec.query ?? LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const q = spec.checkpoint ? spec.checkpoint.parse(c) : offsetQuery(c);
      const present = spec.present(c, params);
      if (q.mode === "offset") {
        const { items, total } = await spec.fetch(c, params, { offset: q.page * q.perPage, limit: q.perPage });
        return c.json(offsetPage(spec.field, await present(items), q, total ?? items.length));
      }
      const checkpoint = spec.checkpoint as RelationCheckpoint<R, A>;
      const after = q.after ? checkpoint.after(q.after) : null;
      const { items } = await spec.fetch(c, params, { after, limit: q.take + 1 } as RelationWindow<A>);
      const body = checkpointPage(spec.field, items, q, checkpoint.position);
      body[spec.field] = await present(body[spec.field] as R[]);
      return c.json(body);
    },
  });
}

/** One side of the pair: what it writes, its scope and success status. */
export interface RelationWrite<P extends string, B> {
  scope: string;
  summary: string;
  status: ContentfulStatusCode | 204;
  write(c: AppContext, params: PathParams<P>, body: B): Promise<Result<unknown>>;
}

/**
 * POST (assign) and DELETE (remove) of a relation, each with the same body and an empty success response;
 * `after` runs once a write succeeded (the control plane's sync of its roles, for example).
 */
export function relationWriteRoutes<P extends string, B>(spec: {
  path: P;
  body: z.ZodType<B>;
  assign?: RelationWrite<P, B>;
  remove?: RelationWrite<P, B>;
  after?: (c: AppContext) => Promise<unknown>;
}): ManagementRoute[] {
  const route = (method: "post" | "delete", side: RelationWrite<P, B>) =>
    defineRoute({
      method,
      path: spec.path,
      scope: side.scope,
      summary: side.summary,
      body: spec.body,
      status: side.status,
      async handler(c, { params, body }) {
        unwrap(await side.write(c, params, body));
        if (spec.after) await spec.after(c);
        return c.body(null, side.status);
      },
    });
  return [...(spec.assign ? [route("post", spec.assign)] : []), ...(spec.remove ? [route("delete", spec.remove)] : [])];
}
