import { problem } from "../../shared/errors";
import type { UserIdentity, UserRecord } from "../../shared/schemas/users";

/** Fields the reference platform leaves out of a user while they have no value. */
const OPTIONAL = ["username", "phone_number", "given_name", "family_name", "picture", "last_login", "last_ip", "registration_completed_at"] as const;

/**
 * A user in the reference platform's shape (SPEC §2.12): identities with the bare id, unset optional fields
 * left out, never the password hash, never `linked_to` (listings show primary users only).
 */
export function presentUser(user: UserRecord): Record<string, unknown> {
  const { linked_to: _linked, identities, ...rest } = user as UserRecord & { password_hash?: unknown };
  const out: Record<string, unknown> = { ...rest };
  delete out.password_hash;
  for (const field of OPTIONAL) if (out[field] === null) delete out[field];
  if (user.phone_number === null) delete out.phone_verified;
  out.identities = identities.length ? identities.map(presentIdentity) : [fallbackIdentity(user)];
  return out;
}

/** One identity as the reference platform shows it. */
export const presentIdentity = (identity: UserIdentity): UserIdentity => ({ ...identity });

/** The identity of an account read without its identities row (never expected after migration 0006). */
function fallbackIdentity(user: UserRecord): UserIdentity {
  const pipe = user.user_id.indexOf("|");
  return {
    connection: user.connection,
    provider: pipe > 0 ? user.user_id.slice(0, pipe) : "auth0",
    user_id: pipe > 0 ? user.user_id.slice(pipe + 1) : user.user_id,
    isSocial: false,
  };
}

const FIELD = /^[a-z_]{1,40}$/;

/**
 * The `fields` / `include_fields` query of the reference platform's user reads: only (or all but) the named
 * top-level fields. A malformed list is a 400.
 */
export function fieldSelector(query: { fields?: string; include_fields?: string }): (user: Record<string, unknown>) => Record<string, unknown> {
  if (query.fields === undefined || query.fields === "") return (user) => user;
  const fields = query.fields.split(",").map((f) => f.trim());
  if (!fields.every((f) => FIELD.test(f))) throw problem("invalid_query_string", { detail: "fields must be a comma-separated list of field names" });
  if (query.include_fields !== undefined && query.include_fields !== "true" && query.include_fields !== "false") {
    throw problem("invalid_query_string", { detail: "include_fields must be true or false" });
  }
  const include = query.include_fields !== "false";
  return (user) => Object.fromEntries(Object.entries(user).filter(([key]) => fields.includes(key) === include));
}
