/**
 * Reading users: rows to records, with their identities (SPEC §2.12): a linked-accounts query per page. Every
 * value is bound; a list of ids travels as one JSON parameter (a Durable Object query binds at most 100).
 */
import { isSocialStrategy } from "../../../shared/strategies";
import type { Json } from "../../../shared/types";
import type { UserIdentity, UserRecord, UserWithSecret } from "../../../shared/schemas/users";
import { binaryOrder, iso, json, type Sql } from "../../sql";

export type UserRow = Record<string, unknown>;

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));

/** A users row as the API shows it, without identities (see {@link toUsers}). */
export function toUserBase(r: UserRow): UserRecord {
  return {
    user_id: String(r.user_id),
    connection: String(r.connection),
    email: text(r.email),
    email_verified: r.email_verified === 1,
    username: text(r.username),
    phone_number: text(r.phone_number),
    phone_verified: r.phone_verified === 1,
    name: text(r.name),
    given_name: text(r.given_name),
    family_name: text(r.family_name),
    nickname: text(r.nickname),
    picture: text(r.picture),
    blocked: r.blocked === 1,
    app_metadata: json(r.app_metadata as string, {}),
    user_metadata: json(r.user_metadata as string, {}),
    last_login: iso(r.last_login as number | null),
    last_ip: text(r.last_ip),
    logins_count: Number(r.logins_count ?? 0),
    linked_to: text(r.linked_to),
    registration_completed_at: iso((r.registration_completed_at as number | null) ?? null),
    identities: [],
    created_at: iso(r.created_at as number) as string,
    updated_at: iso(r.updated_at as number) as string,
  };
}

/** Profile attributes a linked account shows in its identity (`profileData`), absent ones left out. */
const PROFILE_FIELDS = ["email", "email_verified", "name", "username", "given_name", "family_name", "nickname", "picture", "phone_number", "phone_verified"] as const;

function profileData(r: UserRow): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const field of PROFILE_FIELDS) {
    const v = r[field];
    if (v === null || v === undefined) continue;
    out[field] = field === "email_verified" || field === "phone_verified" ? v === 1 : String(v);
  }
  if (r.phone_number == null) delete out.phone_verified;
  return out;
}

/** The provider and bare id of an account id: split at the first pipe (pipes inside the id are kept). */
export function splitUserId(userId: string): { provider: string; bare: string } {
  const pipe = userId.indexOf("|");
  return pipe > 0 ? { provider: userId.slice(0, pipe), bare: userId.slice(pipe + 1) } : { provider: "auth0", bare: userId };
}

/**
 * The identities of a page of primary users, primary identity first, then linked accounts in link order:
 * `{connection, provider, user_id (bare), isSocial}` plus `profileData` for linked accounts. The primary
 * identity comes from the user's own row; only linked accounts are read (a partial index on linked_to),
 * so a page of unlinked users costs no identity query beyond the connections' strategies. One user (every
 * point read, the refresh grant's among them) reads its connections' strategies by name and its linked
 * accounts by the index directly, instead of the whole connections table and a json_each list.
 */
export function loadIdentities(sql: Sql, rows: UserRow[]): Map<string, UserIdentity[]> {
  if (rows.length === 0) return new Map();
  const strategies = new Map<string, string | undefined>();
  if (rows.length > 1) for (const c of sql.all<{ name: string; strategy: string }>`SELECT name, strategy FROM connections`) strategies.set(c.name, c.strategy);
  const strategyOf = (name: string) => {
    if (!strategies.has(name)) strategies.set(name, sql.first<{ strategy: string }>`SELECT strategy FROM connections WHERE name = ${name}`?.strategy);
    return strategies.get(name);
  };
  const only = rows.length === 1 ? String(rows[0]?.user_id) : null;
  // Linked accounts are rare: the users rows first (one indexed table), their link times only when there are
  // any, and the order made here. A join and an ORDER BY in one statement cost several times as much in a
  // Durable Object, even over no rows, and every user read (the refresh grant's among them) makes this one.
  const linked = (
    only !== null
      ? sql.all<UserRow>`SELECT * FROM users WHERE linked_to = ${only}`
      : sql.all<UserRow>`SELECT * FROM users WHERE linked_to IN (SELECT value FROM json_each(${JSON.stringify(rows.map((r) => String(r.user_id)))}))`
  );
  return identitiesOf(sql, rows, linked, strategyOf);
}

/** The identities of `rows` given their linked accounts and a way to know a connection's strategy. */
function identitiesOf(sql: Sql, rows: UserRow[], linked: UserRow[], strategyOf: (connection: string) => string | undefined): Map<string, UserIdentity[]> {
  const out = new Map<string, UserIdentity[]>();
  const identity = (r: UserRow): UserIdentity => {
    const { provider, bare } = splitUserId(String(r.user_id));
    return { connection: String(r.connection), provider, user_id: bare, isSocial: isSocialStrategy(strategyOf(String(r.connection))) };
  };
  for (const r of rows) out.set(String(r.user_id), [identity(r)]);
  if (linked.length > 1) {
    const linkedAt = new Map<string, number>();
    for (const r of linked) linkedAt.set(String(r.user_id), Number(sql.first<{ linked_at: number }>`SELECT linked_at FROM identities WHERE source_user_id = ${String(r.user_id)}`?.linked_at ?? 0));
    const key = (r: UserRow) => linkedAt.get(String(r.user_id)) ?? 0;
    linked.sort((a, b) => key(a) - key(b) || binaryOrder(String(a.user_id), String(b.user_id)));
  }
  for (const r of linked) out.get(String(r.linked_to))?.push({ ...identity(r), profileData: profileData(r) });
  return out;
}


/** Records of a page of rows, identities included, in the rows' order. */
export function toUsers(sql: Sql, rows: UserRow[]): UserRecord[] {
  const identities = loadIdentities(sql, rows);
  return rows.map((row) => ({ ...toUserBase(row), identities: identities.get(String(row.user_id)) ?? [] }));
}

/** One row by user id (a linked secondary included), or undefined. */
export const userRow = (sql: Sql, userId: string) => sql.first<UserRow>`SELECT * FROM users WHERE user_id = ${userId}`;

/**
 * One account with its identities (a secondary shows none of its own: they live on its primary). One statement
 * (issue 31: was three, the row, its connection's strategy and its linked accounts): the row and the rows linked
 * to it, each with its connection's strategy; linked accounts are ordered as {@link loadIdentities} does.
 */
export function getAccount(sql: Sql, userId: string): UserRecord | null {
  const rows = sql.all<AccountRow>`SELECT u.*, (SELECT strategy FROM connections WHERE name = u.connection) AS strategy_
    FROM users u WHERE u.user_id = ${userId} OR u.linked_to = ${userId}`;
  const row = rows.find((r) => r.user_id === userId);
  return row ? accountOf(sql, row, rows) : null;
}

type AccountRow = UserRow & { strategy_: string | null };

/** An account's record from its row and the rows linked to it, each read with its connection's strategy. */
function accountOf(sql: Sql, row: AccountRow, rows: AccountRow[]): UserRecord {
  const userId = String(row.user_id);
  const strategies = new Map(rows.map((r) => [String(r.connection), r.strategy_ ?? undefined]));
  const identities = identitiesOf(sql, [row], rows.filter((r) => r !== row && r.linked_to === userId), (name) => strategies.get(name));
  return { ...toUserBase(row), identities: identities.get(userId) ?? [] };
}

/**
 * A user as the API and the login flows see it: a primary user, or null. A linked secondary account is not
 * a user of its own any more (SPEC §2.12: it appears as an identity on its primary).
 */
export function getUser(sql: Sql, userId: string): UserRecord | null {
  const user = getAccount(sql, userId);
  return user && user.linked_to === null ? user : null;
}

/**
 * {@link getUser} without its identities (`identities: []`), for a reader that never shows them: the refresh
 * grant of a tenant without post-login actions needs the user's standing and profile only, so it reads the row by
 * its key alone, without the linked accounts and the connections' strategies (issue 31).
 */
export function getUserWithoutIdentities(sql: Sql, userId: string): UserRecord | null {
  const row = userRow(sql, userId);
  const user = row ? toUserBase(row) : null;
  return user && user.linked_to === null ? user : null;
}

/** An account by email in a connection (a secondary included), with its hash for the worker's password check. */
export function findUserByEmail(sql: Sql, connection: string, email: string): UserWithSecret | null {
  // One statement (issue 31: was three, the row, its linked accounts and its connection's strategy; the login
  // form's read): the account by its unique (connection, email) key, and the rows linked to it, as getAccount.
  const rows = sql.all<AccountRow>`SELECT u.*, (SELECT strategy FROM connections WHERE name = u.connection) AS strategy_
    FROM users u WHERE u.user_id = (SELECT user_id FROM users WHERE connection = ${connection} AND email = ${email})
      OR u.linked_to = (SELECT user_id FROM users WHERE connection = ${connection} AND email = ${email})`;
  const row = rows.find((r) => r.connection === connection && r.email === email);
  return row ? { ...accountOf(sql, row, rows), password_hash: text(row.password_hash) } : null;
}

/** Primary users with this email (GET /users-by-email): their own, or one of their linked accounts'. */
export function usersByEmail(sql: Sql, email: string): UserRecord[] {
  const rows = sql.all<UserRow>`SELECT * FROM users WHERE linked_to IS NULL AND (email = ${email}
      OR user_id IN (SELECT linked_to FROM users WHERE email = ${email} AND linked_to IS NOT NULL))
    ORDER BY created_at DESC, user_id DESC LIMIT 100`;
  return toUsers(sql, rows);
}

type LoginAccountRow = { user_id: string; connection: string; email: string | null; username: string | null; phone_number: string | null };

/** A primary user's own account and its linked ones, or null when no primary user has this id. */
export function loginAccountsOf(sql: Sql, userId: string): LoginAccountRow[] | null {
  const own = sql.first<LoginAccountRow>`SELECT user_id, connection, email, username, phone_number FROM users WHERE user_id = ${userId} AND linked_to IS NULL`;
  if (!own) return null;
  const linked = sql.all<LoginAccountRow>`SELECT user_id, connection, email, username, phone_number FROM users WHERE linked_to = ${userId}`;
  return [own, ...linked];
}

/** The accounts (linked ones included) whose email (normalized), username or phone number is this identifier. */
export function loginAccountsNamed(sql: Sql, email: string, identifier: string): LoginAccountRow[] {
  return sql.all<LoginAccountRow>`SELECT user_id, connection, email, username, phone_number FROM users
    WHERE email = ${email} OR username = ${identifier} OR phone_number = ${identifier} LIMIT 100`;
}
