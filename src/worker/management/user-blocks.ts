import { z } from "zod";
import { problem } from "../../shared/errors";
import { normalizeEmail, type UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { configOf, DATABASE_STRATEGY } from "../login/connection";
import { identifierKey } from "../login/password";
import { userObject } from "../tenant/stubs";
import { defineRoute } from "./define";
import { targetTenant } from "./tenant-scoped";

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

const holderOf = (user: UserRecord): LockHolder => ({
  key: user.user_id,
  identifier: user.email ?? user.username ?? user.phone_number ?? user.user_id,
  connection: user.connection,
});

/**
 * Where the locks of an identifier are counted, as the login form counts them (src/worker/login/password.ts):
 * on each database connection, the account with that email, else the connection's unknown-identifier
 * counter; and the accounts whose username or phone number it is.
 */
async function holdersOf(c: AppContext, identifier: string): Promise<LockHolder[]> {
  const users = targetTenant(c).users();
  const config = await configOf(c);
  const email = normalizeEmail(identifier);
  const holders = new Map<string, LockHolder>();
  for (const connection of config.connections.filter((x) => x.strategy === DATABASE_STRATEGY)) {
    const found = email ? await users.findByEmail(connection.name, email) : null;
    const holder = found ? { key: found.user_id, identifier: email, connection: connection.name } : { key: identifierKey(connection.name, email), identifier: email, connection: connection.name };
    if (email) holders.set(holder.key, holder);
  }
  const quoted = JSON.stringify(identifier);
  for (const q of [`username:${quoted}`, `phone_number:${quoted}`]) {
    // An identifier the user search cannot express (odd characters) names no username or phone number.
    const page = await users.list({ q, ascending: true }, { offset: 0, limit: 50 }).catch(() => null);
    for (const user of page?.items ?? []) holders.set(user.user_id, holderOf(user));
  }
  return [...holders.values()];
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

async function userHolder(c: AppContext, id: string): Promise<LockHolder> {
  const user = await targetTenant(c).users().get(id);
  if (!user) throw problem("inexistent_user");
  return holderOf(user);
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
      const holder = await userHolder(c, params.id ?? "");
      return c.json(await blockedFor(c, [holder], query.consider_brute_force_enablement === "true"));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/user-blocks/{id}",
    scope: "update:users",
    summary: "Lift the brute-force protection blocks of a user (not an administrator's block)",
    status: 204,
    async handler(c, { params }) {
      await unblock(c, [await userHolder(c, params.id ?? "")]);
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
      return c.json(await blockedFor(c, await holdersOf(c, query.identifier), query.consider_brute_force_enablement === "true"));
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
      await unblock(c, await holdersOf(c, query.identifier));
      return c.body(null, 204);
    },
  }),
];
