/**
 * PATCH /api/v2/users/{id}, prepare phase: who may change what (scopes), which identity the request names
 * (SPEC §4.2: `connection` selects a linked identity), the connection's rules, the password hashed here.
 */
import { problem, unwrap } from "../../shared/errors";
import type { UpdateUserInput } from "../../shared/schemas/users";
import type { UserFieldPatch, UserPatch, UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { configOf } from "../login/connection";
import { tenantObject } from "../tenant/stubs";
import { updateThroughScripts } from "../actions/custom-db";
import { checkStrategyFields, hashChecked } from "./create";
import { runUserHooks } from "./hooks";
import { breachedPasswordVerdict } from "./breached-password";

/** Fields a request naming a linked (secondary) identity may change on it (SPEC §4.2). */
const SECONDARY_FIELDS = new Set(["connection", "client_id", "email", "email_verified", "verify_email", "phone_number", "phone_verified", "verify_phone_number", "password", "username", "app_metadata", "user_metadata"]);

/** Profile fields replaced as given (null unsets). */
const FIELDS = ["email", "email_verified", "username", "phone_number", "phone_verified", "name", "given_name", "family_name", "nickname", "picture", "blocked"] as const;

/**
 * The narrower scopes of PATCH (the reference platform): `update:users_app_metadata` changes app_metadata
 * only; a user's own token with `update:current_user_metadata` changes its own user_metadata only.
 */
function assertMayChange(c: AppContext, body: UpdateUserInput): void {
  const auth = c.var.auth;
  // An operator's console token (issue 30) holds management scopes as a client token does.
  const managing = auth.kind !== "user";
  if (managing && auth.scopes.has("update:users")) return;
  const allowed = managing ? ["app_metadata"] : ["user_metadata"];
  const scope = managing ? "update:users" : "update:users, update:current_user_metadata";
  if (Object.keys(body).some((key) => !allowed.includes(key))) throw problem("insufficient_scope", { scope });
}

/** Updates a user (or one of its linked identities) and answers the primary with all identities. */
export async function updateManagedUser(c: AppContext, userId: string, body: UpdateUserInput): Promise<UserRecord> {
  assertMayChange(c, body);
  const tenant = tenantObject(c.env, c.var.tenant.id);
  // The user and the pre-user-update hooks in one read (issue 31: was two round trips).
  const { user: current, hooks } = await tenant.userWithHooks(userId, "pre-user-update");
  if (!current) throw problem("inexistent_user");
  const connectionName = body.connection ?? current.connection;
  if (!current.identities.some((i) => i.connection === connectionName)) {
    throw problem("inexistent_identity_connection", { connection: connectionName });
  }
  const secondary = connectionName !== current.connection;
  const extra = Object.keys(body).filter((key) => !SECONDARY_FIELDS.has(key));
  if (secondary && extra.length) {
    throw problem("user_field_not_allowed", { detail: `Cannot update ${extra.join(", ")} of a linked identity (connection ${connectionName})` });
  }
  const connection = (await configOf(c)).connections.find((x) => x.name === connectionName);
  if (connection) {
    checkStrategyFields(connection, { ...body, password: body.password ?? undefined }, false);
    if (secondary && body.phone_number !== undefined && connection.strategy !== "sms") {
      throw problem("user_field_not_allowed", { detail: "phone_number of a linked identity can only be updated for an SMS connection" });
    }
  } else if (body.password !== undefined) {
    throw problem("user_field_not_allowed", { detail: "Passwords are only valid for database connections" });
  }
  const { password, ...shown } = body;
  await runUserHooks(c, "pre-user-update", { user_id: userId, updates: shown }, hooks);
  // The password policy first (hashChecked refuses a weak one), before any script stores it.
  const hash = password != null && connection ? await hashChecked(password, connection) : undefined;
  // Breached-password detection's pre-change-password stage, as a reset: logged, refused under `block`.
  if (password != null && connection) {
    const who = { client_id: c.var.auth.clientId, user_id: userId, connection: connection.name, email: current.email ?? "" };
    if ((await breachedPasswordVerdict(c, "pre-change-password", password, who)) === "block") throw problem("password_leaked");
  }
  // Issue 32: a custom database without import mode stores the change through its scripts first.
  const scripted = secondary ? { passwordStored: false } : await updateThroughScripts(c, await configOf(c), current, body);
  const fields: UserFieldPatch = {};
  for (const key of FIELDS) if (body[key] !== undefined) (fields as Record<string, unknown>)[key] = body[key];
  const patch: UserPatch = {
    fields,
    ...(body.app_metadata !== undefined ? { app_metadata: body.app_metadata } : {}),
    ...(body.user_metadata !== undefined ? { user_metadata: body.user_metadata } : {}),
    ...(hash !== undefined && !scripted.passwordStored ? { password_hash: hash } : {}),
    ...(body.connection !== undefined ? { connection: body.connection } : {}),
  };
  return unwrap(await tenant.users(auditContext(c)).update(userId, patch));
}
