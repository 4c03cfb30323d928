/**
 * POST /api/v2/users, prepare phase (SPEC §1: validation and blocking hooks outside any transaction): the
 * connection must be a database or passwordless connection of the tenant, the fields it needs present and
 * the password within its policy; the password is hashed here, never in the object.
 */
import { hashPassword } from "../../shared/crypto/passwords";
import { randomId } from "../../shared/crypto/random";
import { problem, unwrap } from "../../shared/errors";
import type { CreateUserInput } from "../../shared/schemas/users";
import { acceptsManagedUsers, DATABASE_STRATEGY } from "../../shared/strategies";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { configOf } from "../login/connection";
import { tenantObject, userObject } from "../tenant/stubs";
import { passwordProblem } from "./password-policy";
import { runUserHooks } from "./hooks";

/** The connection a user may be created in (400 when it is unknown or neither database nor passwordless). */
export async function managedConnection(c: AppContext, name: string): Promise<ConnectionRecord> {
  const config = await configOf(c);
  const connection = config.connections.find((x) => x.name === name);
  if (!connection) throw problem("user_connection_not_found");
  if (!acceptsManagedUsers(connection.strategy)) throw problem("user_connection_unsupported");
  return connection;
}

/** Whether a database connection asks for usernames (the reference platform's `requires_username`). */
export const requiresUsername = (connection: ConnectionRecord) => connection.options.requires_username === true;

/** The fields a connection's strategy needs and refuses (the reference platform's rules). */
export function checkStrategyFields(
  connection: ConnectionRecord,
  body: { email?: string | null; username?: string | null; phone_number?: string | null; password?: string },
  creating: boolean,
): void {
  const strategy = connection.strategy;
  if (body.password !== undefined && strategy !== DATABASE_STRATEGY) {
    throw problem("user_field_not_allowed", { detail: "Passwords are only valid for database connections" });
  }
  if (body.username != null && (strategy !== DATABASE_STRATEGY || !requiresUsername(connection))) {
    throw problem("user_field_not_allowed", { detail: "Cannot set username for connection without requires_username" });
  }
  if (!creating) return;
  if (strategy === DATABASE_STRATEGY) {
    if (!body.email) throw problem("user_field_required", { field: "email" });
    if (!body.password) throw problem("user_field_required", { field: "password" });
    if (requiresUsername(connection) && !body.username) throw problem("user_field_required", { field: "username" });
  } else if (strategy === "email" && !body.email) {
    throw problem("user_field_required", { field: "email" });
  } else if (strategy === "sms" && !body.phone_number) {
    throw problem("user_field_required", { field: "phone_number" });
  }
}

/** The password's hash, after the connection's policy (400 `PasswordStrengthError` when refused). */
export async function hashChecked(password: string, connection: ConnectionRecord): Promise<string> {
  const weak = passwordProblem(password, connection);
  if (weak) throw problem("password_too_weak", { detail: weak.message });
  return hashPassword(password);
}

/**
 * The full user id: `{provider}|{id}`, the provider being the strategy (`auth0` for databases). A caller's id
 * may come bare or already prefixed with that provider; pipes inside it are kept.
 */
export function managedUserId(connection: ConnectionRecord, given: string | undefined): string {
  const provider = connection.strategy;
  if (given === undefined) return `${provider}|${randomId("", 24)}`;
  return given.startsWith(`${provider}|`) ? given : `${provider}|${given}`;
}

/** Creates a user through the management API and answers it (201), or throws the failure. */
export async function createManagedUser(c: AppContext, body: CreateUserInput): Promise<UserRecord> {
  const connection = await managedConnection(c, body.connection);
  checkStrategyFields(connection, body, true);
  const userId = managedUserId(connection, body.user_id);
  const { password, verify_email: _verify, user_id: _id, connection: _connection, ...profile } = body;
  if (body.username != null) await runUserHooks(c, "validate-registration-username", { username: body.username, connection: connection.name });
  await runUserHooks(c, "pre-user-registration", { user: { ...profile, user_id: userId, connection: connection.name } });
  const passwordHash = password === undefined ? null : await hashChecked(password, connection);
  const tenant = tenantObject(c.env, c.var.tenant.id);
  // A caller-chosen id must never inherit what a deleted user of the same id left in its user object.
  if (body.user_id !== undefined && !(await tenant.users().exists(userId))) {
    await userObject(c.env, c.var.tenant.id, userId).wipe();
  }
  return unwrap(
    await tenant.users(auditContext(c)).add({
      ...profile,
      user_id: userId,
      connection: connection.name,
      email: profile.email ?? null,
      email_verified: profile.email_verified ?? false,
      password_hash: passwordHash,
    }),
  );
}
