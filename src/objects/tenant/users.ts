import { normalizeEmail } from "../../shared/schemas/users";
import { fail, ok, type Result } from "../../shared/errors";
import type { NewUser, UserRecord, UserWithSecret } from "../../shared/types";
import { iso, json, type Sql } from "../sql";
import { TenantRpc } from "./rpc";

type Row = Record<string, unknown>;

export function toUser(r: Row): UserRecord {
  return {
    user_id: String(r.user_id),
    connection: String(r.connection),
    email: (r.email as string | null) ?? null,
    email_verified: r.email_verified === 1,
    name: (r.name as string | null) ?? null,
    nickname: (r.nickname as string | null) ?? null,
    picture: (r.picture as string | null) ?? null,
    blocked: r.blocked === 1,
    app_metadata: json(r.app_metadata as string, {}),
    user_metadata: json(r.user_metadata as string, {}),
    last_login: iso(r.last_login as number | null),
    logins_count: Number(r.logins_count ?? 0),
    created_at: iso(r.created_at as number) as string,
    updated_at: iso(r.updated_at as number) as string,
  };
}

const withSecret = (r: Row): UserWithSecret => ({ ...toUser(r), password_hash: (r.password_hash as string | null) ?? null });


export function findUserByEmail(sql: Sql, connection: string, email: string): UserWithSecret | null {
  const row = sql.first<Row>`SELECT * FROM users WHERE connection = ${connection} AND email = ${normalizeEmail(email)}`;
  return row ? withSecret(row) : null;
}

export function getUser(sql: Sql, userId: string): UserRecord | null {
  const row = sql.first<Row>`SELECT * FROM users WHERE user_id = ${userId}`;
  return row ? toUser(row) : null;
}

export function createUser(sql: Sql, user: NewUser, now: number): Result<UserRecord> {
  const email = normalizeEmail(user.email);
  if (sql.first`SELECT 1 FROM users WHERE connection = ${user.connection} AND email = ${email}`) {
    return fail("user_exists");
  }
  sql.run`INSERT INTO users (user_id, connection, email, email_verified, password_hash, name, nickname,
      user_metadata, created_at, updated_at)
    VALUES (${user.user_id}, ${user.connection}, ${email}, ${user.email_verified}, ${user.password_hash},
      ${user.name ?? email}, ${user.nickname ?? email.split("@")[0]}, ${user.user_metadata ?? {}}, ${now}, ${now})`;
  return ok(getUser(sql, user.user_id) as UserRecord);
}

/** A successful login: counters and timestamps. */
export function recordLogin(sql: Sql, userId: string, now: number): void {
  sql.run`UPDATE users SET logins_count = logins_count + 1, last_login = ${now}, updated_at = ${now} WHERE user_id = ${userId}`;
}

/** The users facade (`stub.users()`). Users are not configuration: writes leave the version alone. */
export class Users extends TenantRpc {
  get(userId: string): UserRecord | null {
    return this.read((sql) => getUser(sql, userId));
  }

  /** With the password hash, for password verification in the worker. */
  findByEmail(connection: string, email: string): UserWithSecret | null {
    return this.read((sql) => findUserByEmail(sql, connection, email));
  }

  create(user: NewUser): Result<UserRecord> {
    return this.commit(({ sql, now }) => createUser(sql, user, now));
  }
}
