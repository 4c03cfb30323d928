/**
 * Reading users: rows to records, with their identities (SPEC §2.12) loaded in one query per page. Every
 * value is bound; a list of ids travels as one JSON parameter (a Durable Object query binds at most 100).
 */
import { isSocialStrategy } from "../../shared/strategies";
import type { Json, UserIdentity, UserRecord, UserWithSecret } from "../../shared/types";
import { iso, json, type Sql } from "../sql";

export type UserRow = Record<string, unknown>;

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));

/** A users row as the API shows it, without identities (see {@link withIdentities}). */
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

/**
 * The identities of the given primary users, primary identity first then linked accounts in link order:
 * `{connection, provider, user_id (bare), isSocial}` plus `profileData` for linked accounts.
 */
export function loadIdentities(sql: Sql, userIds: string[]): Map<string, UserIdentity[]> {
  const out = new Map<string, UserIdentity[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const rows = sql.all<UserRow & { owner: string; source: string; provider: string; bare: string; strategy: string | null }>`
    SELECT i.user_id AS owner, i.source_user_id AS source, i.provider, i.identity_user_id AS bare, c.strategy,
      u.connection, u.email, u.email_verified, u.name, u.username, u.given_name, u.family_name, u.nickname, u.picture,
      u.phone_number, u.phone_verified
    FROM identities i
    JOIN users u ON u.user_id = i.source_user_id
    LEFT JOIN connections c ON c.name = i.connection
    WHERE i.user_id IN (SELECT value FROM json_each(${JSON.stringify(userIds)}))
    ORDER BY i.user_id, i.source_user_id <> i.user_id, i.linked_at, i.source_user_id`;
  for (const r of rows) {
    const identity: UserIdentity = { connection: String(r.connection), provider: r.provider, user_id: r.bare, isSocial: isSocialStrategy(r.strategy) };
    if (r.source !== r.owner) identity.profileData = profileData(r);
    out.get(r.owner)?.push(identity);
  }
  return out;
}

/** Records of a page of rows, identities included, in the rows' order. */
export function toUsers(sql: Sql, rows: UserRow[]): UserRecord[] {
  const users = rows.map(toUserBase);
  const identities = loadIdentities(sql, users.map((u) => u.user_id));
  for (const user of users) user.identities = identities.get(user.user_id) ?? [];
  return users;
}

/** One row by user id (a linked secondary included), or undefined. */
export const userRow = (sql: Sql, userId: string) => sql.first<UserRow>`SELECT * FROM users WHERE user_id = ${userId}`;

/** One account with its identities (a secondary shows none of its own: they live on its primary). */
export function getAccount(sql: Sql, userId: string): UserRecord | null {
  const row = userRow(sql, userId);
  return row ? (toUsers(sql, [row])[0] ?? null) : null;
}

/**
 * A user as the API and the login flows see it: a primary user, or null. A linked secondary account is not
 * a user of its own any more (SPEC §2.12: it appears as an identity on its primary).
 */
export function getUser(sql: Sql, userId: string): UserRecord | null {
  const user = getAccount(sql, userId);
  return user && user.linked_to === null ? user : null;
}

/** An account by email in a connection (a secondary included), with its hash for the worker's password check. */
export function findUserByEmail(sql: Sql, connection: string, email: string): UserWithSecret | null {
  const row = sql.first<UserRow>`SELECT * FROM users WHERE connection = ${connection} AND email = ${email}`;
  if (!row) return null;
  const user = toUsers(sql, [row])[0] as UserRecord;
  return { ...user, password_hash: text(row.password_hash) };
}

/** Primary users with this email (GET /users-by-email): their own, or one of their linked accounts'. */
export function usersByEmail(sql: Sql, email: string): UserRecord[] {
  const rows = sql.all<UserRow>`SELECT * FROM users WHERE linked_to IS NULL AND (email = ${email}
      OR user_id IN (SELECT linked_to FROM users WHERE email = ${email} AND linked_to IS NOT NULL))
    ORDER BY created_at DESC, user_id DESC LIMIT 100`;
  return toUsers(sql, rows);
}
