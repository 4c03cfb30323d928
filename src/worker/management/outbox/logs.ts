import { z } from "zod";
import { problem } from "../../../shared/errors";
import { luceneToSql } from "../../../shared/lucene";
import { LOGS_SEARCH } from "../../../shared/logs-search";
import { checkpointPage, offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import type { LogRecord } from "../../../shared/types";
import type { AppContext } from "../../context";
import { defineRoute } from "../define";
import { LIST_QUERY } from "../list-response";
import { targetTenant } from "../tenant-scoped";

/** SPEC §4.3: /logs honours only `sort=date:1|-1` (newest first by default). */
const SORTS = ["date:-1", "date:1"];

/**
 * A page of logs; `extra` narrows the filter (GET /users/{id}/logs). SPEC §4.3: /logs is checkpoint-capable;
 * /users/{id}/logs is not, so it ignores from/take and never answers `next`.
 */
async function logPage(c: AppContext, extra: { user_id?: string } = {}): Promise<Response> {
  const page = parseListQuery(c.req.query(), { checkpoint: extra.user_id === undefined, sorts: SORTS });
  // The reference platform's SDKs send the query as `search`; `q` is the documented name. Parsed here so a
  // bad query is a 400 before the object is asked; the object compiles the same text to SQL.
  const q = c.req.query("q") ?? c.req.query("search");
  luceneToSql(q, LOGS_SEARCH);
  const filter = { ...(q !== undefined ? { q } : {}), ...extra };
  const ascending = page.sort === "date:1";
  const tenant = targetTenant(c);
  if (page.mode === "offset") {
    const { items, total } = await tenant.logs().list(filter, { offset: page.page * page.perPage, limit: page.perPage, ascending });
    return c.json(offsetPage("logs", items, page, total ?? items.length));
  }
  const date = Number(page.after?.key);
  if (page.after && !Number.isSafeInteger(date)) throw problem("invalid_cursor");
  const after = page.after ? { date, id: page.after.id } : null;
  const { items } = await tenant.logs().list(filter, { after, limit: page.take + 1, ascending });
  return c.json(checkpointPage("logs", items, page, (log: LogRecord) => ({ key: Date.parse(log.date), id: log.log_id })));
}

const LOG_QUERY = LIST_QUERY.extend({
  sort: z.string().optional().describe("date:-1 (default) or date:1"),
  search: z.string().optional().describe("alias of q (what the reference platform's SDKs send)"),
  q: z
    .string()
    .optional()
    .describe('Lucene syntax on type, user_id, client_id, ip, event_type, description, date and details.<path> (a Gatehouse extension, e.g. details.target.id:"rol_1"): (type:fp OR type:fu) AND date:[2026-01-01 TO *]'),
});

export const logRoutes = [
  defineRoute({
    method: "get",
    path: "/logs",
    scope: "read:logs",
    summary: "Search audit log events (offset or checkpoint paging; sort by date only)",
    query: LOG_QUERY,
    status: 200,
    handler: (c) => logPage(c),
  }),
  defineRoute({
    method: "get",
    path: "/logs/{id}",
    scope: "read:logs",
    summary: "Get one log event by log_id",
    status: 200,
    async handler(c, { params }) {
      const log = await targetTenant(c).logs().get(params.id);
      if (!log) throw problem("inexistent_log");
      return c.json(log);
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}/logs",
    scope: "read:logs",
    summary: "A user's log events (same filters and sort as /logs; offset paging only)",
    query: LOG_QUERY,
    status: 200,
    handler: (c, { params }) => logPage(c, { user_id: params.id }),
  }),
];
