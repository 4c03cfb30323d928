import { z } from "zod";
import { problem } from "../../../shared/errors";
import { parseListQuery } from "../../../shared/pagination/list-query";
import { bulkRetryBody } from "../../../shared/schemas/hooks";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

const FAILED_EVENTS_QUERY = z.looseObject({
  page: z.string().optional().describe("0-based page"),
  per_page: z.string().optional().describe("1-100, default 50"),
  include_totals: z.string().optional().describe("true|false"),
});

export const failedEventRoutes = [
  defineRoute({
    method: "get",
    path: "/failed-events",
    scope: "read:failed_events",
    summary: "Dead-lettered outbox events, newest first (page from 0, per_page 50, include_totals)",
    query: FAILED_EVENTS_QUERY,
    status: 200,
    async handler(c) {
      const q = parseListQuery(c.req.query(), { checkpoint: false });
      if (q.mode !== "offset") throw problem("checkpoint_unsupported");
      const { items, total } = await targetTenant(c).failedEvents().list(q.page * q.perPage, q.perPage);
      if (!q.includeTotals) return c.json(items);
      return c.json({ start: q.page * q.perPage, limit: q.perPage, length: items.length, total, events: items });
    },
  }),
  defineRoute({
    method: "post",
    path: "/failed-events/{id}/retry",
    scope: "update:failed_events",
    summary: "Replay one dead-lettered event (retry and claim fields cleared; delivered by the next relay pass)",
    status: 200,
    async handler(c, { params }) {
      const id = params.id;
      const { replayed } = await targetTenant(c).failedEvents().replay([id], auditContext(c));
      if (!replayed.length) throw problem("inexistent_failed_event");
      return c.json({ id, replayed: true });
    },
  }),
  defineRoute({
    method: "post",
    path: "/failed-events/bulk-retry",
    scope: "update:failed_events",
    summary: "Replay up to 100 dead-lettered events: {replayed, not_found}; a missing id never aborts the batch",
    body: bulkRetryBody,
    status: 200,
    async handler(c, { body }) {
      return c.json(await targetTenant(c).failedEvents().replay([...new Set(body.ids)], auditContext(c)));
    },
  }),
];
