import { z } from "zod";
import { problem } from "../../../shared/errors";
import { type LoginAccount, normalizeEmail } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { configOf, DATABASE_STRATEGY } from "../../login/connection";
import { identifierKey } from "../../login/password";
import { userObject } from "../../tenant/stubs";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/**
 * Brute-force protection's blocks (the reference platform's `/user-blocks`): the failed-login locks counted
 * in each user's object (SPEC §5.11), read and lifted. They never touch `blocked: true`, which is an
 * administrator's block and stays until PATCH /users/{id} lifts it.
 */

/** One place a lock is counted: a user's object, or the object of an email no account has on a connection. */
interface LockHolder {
  key: string;
  identifier: string;
  connection: string;
}

const considerQuery = z.looseObject({
  consider_brute_force_enablement: z.enum(["true", "false"]).optional().describe("With true, no blocks are listed while brute-force protection does not block"),
});

const identifierQuery = z.looseObject({
  identifier: z.string().min(1, "identifier is required").max(300).describe("An email, username or phone number"),
  consider_brute_force_enablement: considerQuery.shape.consider_brute_force_enablement,
});

/** The database connections' names: only their accounts count failed logins (src/worker/login/password.ts). */
async function databaseConnections(c: AppContext): Promise<Set<string>> {
  return new Set((await configOf(c)).connections.filter((x) => x.strategy === DATABASE_STRATEGY).map((x) => x.name));
}

const holderOf = (account: LoginAccount): LockHolder => ({
  key: account.user_id,
  identifier: account.email ?? account.username ?? account.phone_number ?? account.user_id,
  connection: account.connection,
});

/**
 * Where the locks of a user are counted: its own account and each linked one on a database connection (the
 * login form counts a linked account's failures in that account's object). 404 for no such user.
 */
async function userHolders(c: AppContext, id: string): Promise<LockHolder[]> {
  const accounts = await targetTenant(c).users().loginAccounts({ user_id: id });
  if (!accounts) throw problem("inexistent_user");
  const databases = await databaseConnections(c);
  return accounts.filter((a) => databases.has(a.connection)).map(holderOf);
}

/**
 * Where the locks of an identifier are counted, as the login form counts them: the database accounts whose
 * email (normalized), username or phone number it is, linked ones included; and, on each database
 * connection where no account has it as its email, that connection's counter for the unknown identifier.
 */
async function identifierHolders(c: AppContext, identifier: string): Promise<LockHolder[]> {
  // Control characters name no email, username or phone number.
  if (/\p{Cc}/u.test(identifier)) throw problem("invalid_query_string", { detail: "identifier must not contain control characters" });
  const accounts = (await targetTenant(c).users().loginAccounts({ identifier })) ?? [];
  const databases = await databaseConnections(c);
  const holders = accounts.filter((a) => databases.has(a.connection)).map(holderOf);
  const email = normalizeEmail(identifier);
  if (email) {
    for (const connection of databases) {
      if (!accounts.some((a) => a.connection === connection && a.email === email)) {
        holders.push({ key: identifierKey(connection, email), identifier: email, connection });
      }
    }
  }
  return holders;
}

/** The locks in force on these holders, in the reference platform's `blocked_for` shape. */
async function blockedFor(c: AppContext, holders: LockHolder[], consider: boolean) {
  const { brute_force_protection: settings } = (await configOf(c)).attackProtection;
  if (consider && !(settings.enabled && settings.shields.includes("block"))) return { blocked_for: [] };
  const perIp = settings.mode === "count_per_identifier_and_ip";
  const lists = await Promise.all(
    holders.map(async (holder) => {
      const blocks = await userObject(c.env, c.var.tenant.id, holder.key).loginBlocks(settings.max_attempts, perIp);
      return blocks.map((block) => ({ identifier: holder.identifier, ...(block.ip ? { ip: block.ip } : {}), connection: holder.connection }));
    }),
  );
  return { blocked_for: lists.flat() };
}

async function unblock(c: AppContext, holders: LockHolder[]): Promise<void> {
  await Promise.all(holders.map((holder) => userObject(c.env, c.var.tenant.id, holder.key).unblockLogins()));
}

export const userBlockRoutes = [
  defineRoute({
    method: "get",
    path: "/user-blocks/{id}",
    scope: "read:users",
    summary: "The brute-force protection blocks of a user ({blocked_for: [{identifier, ip, connection}]})",
    query: considerQuery,
    status: 200,
    async handler(c, { params, query }) {
      return c.json(await blockedFor(c, await userHolders(c, params.id ?? ""), query.consider_brute_force_enablement === "true"));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/user-blocks/{id}",
    scope: "update:users",
    summary: "Lift the brute-force protection blocks of a user (not an administrator's block)",
    status: 204,
    async handler(c, { params }) {
      await unblock(c, await userHolders(c, params.id ?? ""));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/user-blocks",
    scope: "read:users",
    summary: "The brute-force protection blocks of an identifier (email, username or phone number)",
    query: identifierQuery,
    status: 200,
    async handler(c, { query }) {
      return c.json(await blockedFor(c, await identifierHolders(c, query.identifier), query.consider_brute_force_enablement === "true"));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/user-blocks",
    scope: "update:users",
    summary: "Lift the brute-force protection blocks of an identifier (email, username or phone number)",
    query: identifierQuery,
    status: 204,
    async handler(c, { query }) {
      await unblock(c, await identifierHolders(c, query.identifier));
      return c.body(null, 204);
    },
  }),
];
