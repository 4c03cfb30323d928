import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { customDatabaseOf } from "../../../shared/actions/db-scripts";
import { connectionClientsBody } from "../../../shared/schemas/connections";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { inheritedItems, refuseInherited } from "../inherited";
import { targetTenant } from "../tenant-scoped";

/** GET /connections/{id}/clients: `take` 1-1000 (default 50), `from` the checkpoint a previous page gave. */
const CLIENTS_QUERY = z.looseObject({
  take: z
    .string()
    .regex(/^\d+$/, "take must be an integer from 1 to 1000")
    .refine((v) => Number(v) >= 1 && Number(v) <= 1000, "take must be an integer from 1 to 1000")
    .optional()
    .describe("1-1000, default 50"),
  from: z.string().max(1000).optional().describe("the `next` of the previous page"),
});

/**
 * The connection-side view of which applications may use a connection (issue 28 point 1). Reads and writes
 * go to the clients' connection lists, the store login reads, so this view, `enabled_clients` on the
 * connection and GET|PATCH /clients/{id}/connections always agree.
 */
export const connectionClientRoutes = [
  defineRoute({
    method: "get",
    path: "/connections/{id}/clients",
    scope: "read:connections",
    summary: "The applications that have the connection enabled, checkpoint-paged: {clients: [{client_id}], next?}",
    query: CLIENTS_QUERY,
    status: 200,
    async handler(c, { params, query }) {
      const stored: string[] | null = await targetTenant(c).connections().clients(params.id);
      // A connection read from the control plane (issue 15 point 2) is not enabled for this tenant's clients.
      if (stored === null && !(await inheritedItems(c)).connections.some((x) => x.id === params.id)) throw problem("inexistent_connection");
      const ids: string[] = stored ?? [];
      const take = Number(query.take ?? 50);
      let start = 0;
      if (query.from !== undefined) {
        start = ids.indexOf(query.from);
        if (start < 0) throw problem("invalid_cursor");
      }
      const page = ids.slice(start, start + take);
      const next = ids[start + take];
      return c.json({ clients: page.map((client_id) => ({ client_id })), ...(next === undefined ? {} : { next }) });
    },
  }),
  defineRoute({
    method: "patch",
    path: "/connections/{id}/clients",
    scope: "update:connections",
    summary: "Turn the connection on or off for up to 50 applications: [{client_id, status}] (204)",
    body: connectionClientsBody,
    status: 204,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      refuseInherited((await inheritedItems(c)).connections, params.id);
      unwrap(await targetTenant(c).connections(auditContext(c)).changeClients(params.id, body));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/connections/{id}/status",
    scope: "read:connections",
    summary:
      "Whether the connection is online: every Gatehouse connection is served in-process, so 200 when it exists. A custom database in import mode adds `gatehouse_migration` (a Gatehouse extension): users moved, script logins per day over the last 30 days from the logs, the last script login",
    status: 200,
    async handler(c, { params }) {
      const known =
        (await targetTenant(c).connections().get(params.id)) ?? (await inheritedItems(c)).connections.find((x) => x.id === params.id);
      if (!known) throw problem("inexistent_connection");
      // Issue 32 point 4: the report an operator reads to know when the legacy store can be switched off.
      const db = customDatabaseOf(known);
      if (!db?.importMode) return c.json({}, 200);
      const report = await targetTenant(c).connections().migrationReport(params.id, true);
      return c.json(report ? { gatehouse_migration: report } : {}, 200);
    },
  }),
];
