import { z } from "zod";
import { problem } from "../../../shared/errors";
import { luceneToSql } from "../../../shared/lucene";
import { checkpointPage, offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import { normalizeEmail, textProblem } from "../../../shared/schemas/users";
import type { UserRecord } from "../../../shared/schemas/users";
import { USER_SORTS, USERS_SEARCH } from "../../../shared/users-search";
import type { AppContext } from "../../context";
import { fieldSelector, presentUser } from "../../users/present";
import { defineRoute } from "../define";
import { LIST_QUERY } from "../list-response";
import { targetTenant } from "../tenant-scoped";

/** The search engines of the reference platform's `search_engine`; v1 is gone there too. */
const ENGINES = ["v2", "v3"];

const USERS_QUERY = LIST_QUERY.extend({
  q: z
    .string()
    .optional()
    .describe("Lucene syntax (SPEC §4.2): a complete email is an equality match, partial terms are substrings; field:value on email, email.domain, name, nickname, given_name, family_name, username, phone_number, last_ip, user_id, connection, identities.connection, identities.provider, identities.user_id, email_verified, phone_verified, blocked, app_metadata.*, user_metadata.*, created_at, updated_at, last_login, logins_count (ranges [a TO b]); field:abc* (starts with), field:*abc (ends with), field:*abc* (contains); AND, OR, NOT, -, quotes, _exists_:field"),
  search_engine: z.string().optional().describe("v3 (default) or v2"),
  sort: z.string().optional().describe("created_at:-1 (default) or created_at:1"),
  connection: z.string().optional().describe("only users with an identity in this connection"),
  fields: z.string().optional().describe("comma-separated fields to include (or exclude with include_fields=false)"),
  include_fields: z.string().optional().describe("true (default) or false"),
  primary_order: z.string().optional().describe("accepted for compatibility; the order is always created_at"),
});

/** GET /users in either pagination mode (SPEC §4.3): primary users only, newest first unless sorted. */
async function listUsers(c: AppContext, query: Record<string, string | undefined>): Promise<Response> {
  const page = parseListQuery(c.req.query(), { checkpoint: true, sorts: [...USER_SORTS] });
  if (query.search_engine !== undefined && !ENGINES.includes(query.search_engine)) {
    throw problem("invalid_query_string", { detail: `search_engine must be v3 or v2, not "${query.search_engine.slice(0, 20)}"` });
  }
  // Parsed here so a bad query is a 400 before the object is asked; the object compiles the same text.
  luceneToSql(query.q, USERS_SEARCH);
  const select = fieldSelector(query);
  const present = (users: UserRecord[]) => users.map((u) => select(presentUser(u)));
  const filter = { ...(query.q !== undefined ? { q: query.q } : {}), ...(query.connection ? { connection: query.connection } : {}), ascending: page.sort === "created_at:1" };
  const users = targetTenant(c).users();
  if (page.mode === "offset") {
    const { items, total } = await users.list(filter, { offset: page.page * page.perPage, limit: page.perPage });
    return c.json(offsetPage("users", present(items), page, total ?? items.length));
  }
  const createdAt = Number(page.after?.key);
  if (page.after && !Number.isSafeInteger(createdAt)) throw problem("invalid_cursor");
  const after = page.after ? { createdAt, id: page.after.id } : null;
  const { items } = await users.list(filter, { after, limit: page.take + 1 });
  const body = checkpointPage("users", items, page, (u: UserRecord) => ({ key: Date.parse(u.created_at), id: u.user_id }));
  body.users = present(body.users as UserRecord[]);
  return c.json(body);
}

export const userListRoutes = [
  defineRoute({
    method: "get",
    path: "/users",
    scope: "read:users",
    summary: "List or search users (q), primary users only: offset {users, start, limit, length, total} or checkpoint {users, next}",
    query: USERS_QUERY,
    status: 200,
    handler: (c, { query }) => listUsers(c, query as Record<string, string | undefined>),
  }),
  defineRoute({
    method: "get",
    path: "/users-by-email",
    scope: "read:users",
    summary: "Users whose email (or a linked account's) equals the given one, trimmed and lowercased (indexed equality)",
    query: z.looseObject({
      email: z.string().optional().describe("the email address (required)"),
      fields: z.string().optional().describe("comma-separated fields to include (or exclude with include_fields=false)"),
      include_fields: z.string().optional().describe("true (default) or false"),
    }),
    status: 200,
    async handler(c, { query }) {
      const email = normalizeEmail(query.email ?? "");
      const bad = email === "" ? "email is required" : textProblem(email) ? `email ${textProblem(email)}` : null;
      if (bad) throw problem("invalid_query_string", { detail: bad });
      const select = fieldSelector(query);
      const users = await targetTenant(c).users().byEmail(email);
      return c.json(users.map((u) => select(presentUser(u))));
    },
  }),
];
