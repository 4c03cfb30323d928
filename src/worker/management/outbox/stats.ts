import { z } from "zod";
import { problem } from "../../../shared/errors";
import type { AppContext } from "../../context";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

const DAY_MS = 86_400_000;
/** The reference platform's "active users": those who logged in during the last 30 days. */
const ACTIVE_WINDOW_MS = 30 * DAY_MS;

/** A YYYYMMDD day as the epoch ms of its UTC midnight; a malformed or impossible day is a 400. */
function dayOf(name: string, value: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  const date = new Date(ms);
  if (!match || Number.isNaN(ms) || date.getUTCDate() !== Number(match[3]) || date.getUTCMonth() !== Number(match[2]) - 1) {
    throw problem("invalid_query_string", { detail: `${name} must be a day in YYYYMMDD format` });
  }
  return ms;
}

const DAILY_QUERY = z.looseObject({
  from: z.string().optional().describe("First day of the range (inclusive), YYYYMMDD (UTC); the tenant's first log by default"),
  to: z.string().optional().describe("Last day of the range (inclusive), YYYYMMDD (UTC); today by default"),
});

const DAILY_STAT = z.object({
  date: z.string(),
  logins: z.number(),
  signups: z.number(),
  leaked_passwords: z.number(),
  failed_logins: z.number().describe("Gatehouse extension: failed logins (log types f, fp, fu)"),
  created_at: z.string(),
  updated_at: z.string(),
});

async function daily(c: AppContext, query: { from?: string; to?: string }): Promise<Response> {
  const from = query.from ? dayOf("from", query.from) : 0;
  const to = query.to ? dayOf("to", query.to) + DAY_MS : Date.now() + DAY_MS;
  if (from >= to) throw problem("invalid_query_string", { detail: "from must not be after to" });
  return c.json(await targetTenant(c).logs().daily(from, to));
}

/**
 * GET /stats/daily and /stats/active-users (issue 30), counted from the tenant's own logs table: logins are
 * `s` events, sign-ups `ss`, failed logins `f`/`fp`/`fu`; days in UTC.
 */
export const statsRoutes = [
  defineRoute({
    method: "get",
    path: "/stats/daily",
    scope: "read:stats",
    summary: "Logins, sign-ups and failed logins per UTC day in a range (days with activity only, oldest first)",
    query: DAILY_QUERY,
    response: z.array(DAILY_STAT),
    status: 200,
    handler: (c, { query }) => daily(c, query),
  }),
  defineRoute({
    method: "get",
    path: "/stats/active-users",
    scope: "read:stats",
    summary: "How many distinct users logged in during the last 30 days",
    response: z.number(),
    status: 200,
    async handler(c) {
      return c.json(await targetTenant(c).logs().activeUsers(Date.now() - ACTIVE_WINDOW_MS));
    },
  }),
];
