/**
 * The `q` language of GET /api/v2/users (SPEC §4.2 "Search rules", issue 9 point 2): the field allowlist
 * over the users table (migration 0006), the identities table for `connection` / `identities.*`, and the
 * trigram index `users_fts` for bare terms of three characters or more. Shared by the worker (which parses
 * `q` to answer a bad query with a 400 before any RPC) and the tenant object (which compiles it to SQL).
 */
import type { LuceneSqlConfig } from "./lucene";

/** A field that lives in the identities table of the user (the primary's own identity included). */
const identities = { outer: "user_id", table: "identities", inner: "user_id" };

export const USERS_SEARCH: LuceneSqlConfig = {
  fields: {
    // The reference platform compares email, name, given_name, family_name and nickname case-insensitively.
    email: { kind: "email", column: "email" },
    "email.domain": { kind: "email", column: "email_domain" },
    name: { kind: "text", column: "name" },
    nickname: { kind: "text", column: "nickname" },
    given_name: { kind: "text", column: "given_name" },
    family_name: { kind: "text", column: "family_name" },
    username: { kind: "exact", column: "username" },
    phone_number: { kind: "exact", column: "phone_number" },
    last_ip: { kind: "exact", column: "last_ip" },
    user_id: { kind: "exact", column: "user_id" },
    connection: { kind: "exact", column: "connection", via: identities },
    "identities.connection": { kind: "exact", column: "connection", via: identities },
    "identities.provider": { kind: "exact", column: "provider", via: identities },
    "identities.user_id": { kind: "exact", column: "identity_user_id", via: identities },
    email_verified: { kind: "boolean", column: "email_verified" },
    phone_verified: { kind: "boolean", column: "phone_verified" },
    blocked: { kind: "boolean", column: "blocked" },
    app_metadata: { kind: "json", column: "app_metadata" },
    user_metadata: { kind: "json", column: "user_metadata" },
    created_at: { kind: "date", column: "created_at" },
    updated_at: { kind: "date", column: "updated_at" },
    last_login: { kind: "date", column: "last_login" },
    logins_count: { kind: "integer", column: "logins_count" },
  },
  // Partial bare terms are substrings of any of these (SPEC §4.2); the trigram index covers them all.
  bareFields: ["email", "name", "nickname", "username", "given_name", "family_name", "phone_number", "user_id"],
  bareFts: "seq IN (SELECT rowid FROM users_fts WHERE users_fts MATCH ?)",
};

/** Sorts GET /users honours (SPEC §4.3 rule 2); the first is the default (newest first). */
export const USER_SORTS = ["created_at:-1", "created_at:1"] as const;
