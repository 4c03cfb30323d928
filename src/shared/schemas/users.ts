/** Users: rules shared by the worker (login, signup, management API) and the tenant object (storage, lookup). */
import { z } from "zod";
import { isEmailAddress } from "../email-address";
import { isReservedKey } from "../object-keys";
import type { Json } from "../types/json";

/** Emails are trimmed and lowercased before storage and lookup everywhere (SPEC §4.2). */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The reference platform's limit on each of app_metadata and user_metadata (serialized). @default 16 KB */
export const METADATA_MAX_BYTES = 16 * 1024;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why a piece of text cannot be stored as it is, or null. A NUL or another control character, or a lone
 * surrogate (which UTF-8 storage would silently replace), is refused rather than altered.
 */
export function textProblem(value: string, allowNewlines = false): string | null {
  if (value.includes("\u0000")) return "must not contain a NUL character";
  if (LONE_SURROGATE.test(value)) return "must not contain a lone surrogate (invalid UTF-16)";
  const control = allowNewlines ? value.replace(/[\n\r\t]/g, "") : value;
  if (CONTROL.test(control)) return "must not contain control characters";
  return null;
}

/** A single-line string of at most `max` characters with no NUL, control character or lone surrogate. */
const line = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .superRefine((value, ctx) => {
      const problem = textProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });

/**
 * Why a metadata value cannot be stored, or null: `__proto__`, `constructor` or `prototype` keys (issue 25
 * finding 3) and bad text at any depth, over 16 KB.
 */
export function metadataProblem(value: unknown): string | null {
  const walk = (v: unknown): string | null => {
    if (typeof v === "string") return textProblem(v, true);
    if (Array.isArray(v)) {
      for (const item of v) {
        const p = walk(item);
        if (p) return p;
      }
      return null;
    }
    if (v !== null && typeof v === "object") {
      for (const [key, item] of Object.entries(v)) {
        if (isReservedKey(key)) return `must not contain the key ${key}`;
        const p = textProblem(key) ?? walk(item);
        if (p) return p;
      }
    }
    return null;
  };
  const problem = walk(value);
  if (problem) return problem;
  if (new TextEncoder().encode(JSON.stringify(value)).byteLength > METADATA_MAX_BYTES) {
    return `must not exceed ${METADATA_MAX_BYTES / 1024} KB`;
  }
  return null;
}

/**
 * Metadata is checked as the caller sent it, before zod builds its copy: a parsed record silently drops a
 * `__proto__` key, and a dropped key must be a 400, never a quiet change.
 */
const checkedRaw = z.unknown().superRefine((value, ctx) => {
  const problem = value !== null && typeof value === "object" ? metadataProblem(value) : null;
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const metadataObject = checkedRaw.pipe(z.record(z.string(), z.json()));

/** Metadata in a PATCH: merged key by key at the top level, a null value removing its key. */
const metadataPatch = checkedRaw.pipe(z.record(z.string(), z.json().nullable()));

/** An email address (src/shared/email-address.ts: an addr-spec, never markup), trimmed and lowercased. */
const email = line(254).transform(normalizeEmail).refine(isEmailAddress, "must be a valid email address");

/** E.164, as the reference platform requires for phone numbers. */
const phoneNumber = line(16).regex(/^\+[1-9]\d{1,14}$/, "must be a phone number in E.164 format (+15551234567)");

/** The reference platform's username rule: 1-128 characters, no whitespace, no `@` that would make it an email. */
const username = line(128)
  .min(1)
  .regex(/^[^\s@]+$/, "must not contain whitespace or @");

const picture = line(2048).url("must be a URL");

/** POST /users (the reference platform's CreateUserRequestContent). Unknown properties are refused. */
export const createUserBody = z.strictObject({
  connection: line(128).min(1),
  user_id: line(255).min(1).optional(),
  email: email.optional(),
  email_verified: z.boolean().optional(),
  verify_email: z.boolean().optional(),
  username: username.optional(),
  phone_number: phoneNumber.optional(),
  phone_verified: z.boolean().optional(),
  password: z.string().min(1).max(1024).optional(),
  name: line(300).optional(),
  given_name: line(150).optional(),
  family_name: line(150).optional(),
  nickname: line(300).optional(),
  picture: picture.optional(),
  blocked: z.boolean().optional(),
  app_metadata: metadataObject.optional(),
  user_metadata: metadataObject.optional(),
});
export type CreateUserInput = z.infer<typeof createUserBody>;

/** PATCH /users/{id} (UpdateUserRequestContent): null unsets a field; metadata merges at the top level. */
export const updateUserBody = z.strictObject({
  connection: line(128).min(1).optional(),
  client_id: line(128).optional(),
  email: email.nullable().optional(),
  email_verified: z.boolean().optional(),
  verify_email: z.boolean().optional(),
  username: username.nullable().optional(),
  phone_number: phoneNumber.nullable().optional(),
  phone_verified: z.boolean().optional(),
  verify_phone_number: z.boolean().optional(),
  password: z.string().min(1).max(1024).optional(),
  name: line(300).nullable().optional(),
  given_name: line(150).nullable().optional(),
  family_name: line(150).nullable().optional(),
  nickname: line(300).nullable().optional(),
  picture: picture.nullable().optional(),
  blocked: z.boolean().optional(),
  app_metadata: metadataPatch.nullable().optional(),
  user_metadata: metadataPatch.nullable().optional(),
});
export type UpdateUserInput = z.infer<typeof updateUserBody>;

/**
 * POST /users/{id}/identities (LinkUserIdentityRequestContent): `{provider, user_id}` with an optional
 * `connection_id`, or `{link_with}` (the secondary account's ID token) alone.
 */
export const linkIdentityBody = z.union([
  z.strictObject({
    provider: line(64).min(1),
    user_id: z.union([line(255).min(1), z.number().int().nonnegative().transform(String)]),
    connection_id: line(64).optional(),
  }),
  z.strictObject({ link_with: z.string().min(1).max(8192) }),
], { error: "Payload validation error: expected {provider, user_id} (and optionally connection_id), or {link_with} alone" });
export type LinkIdentityInput = z.infer<typeof linkIdentityBody>;

/**
 * One identity of a user (SPEC §2.12): the account it is (connection, provider, the bare id without the
 * provider prefix) and, for a linked secondary account, that account's profile attributes.
 */
export interface UserIdentity {
  connection: string;
  provider: string;
  user_id: string;
  isSocial: boolean;
  profileData?: Record<string, Json>;
}

/** A user as the API shows it (never the password hash). Absent values are null. */
export interface UserRecord {
  user_id: string;
  connection: string;
  email: string | null;
  email_verified: boolean;
  username: string | null;
  phone_number: string | null;
  phone_verified: boolean;
  name: string | null;
  given_name: string | null;
  family_name: string | null;
  nickname: string | null;
  picture: string | null;
  blocked: boolean;
  app_metadata: Record<string, Json>;
  user_metadata: Record<string, Json>;
  last_login: string | null;
  last_ip: string | null;
  logins_count: number;
  /** The primary user this account is linked to (a secondary account); null for a primary user. */
  linked_to: string | null;
  /**
   * When the post-user-registration work finished (SPEC §2.12, §6: set by the registration finalizer after
   * every delivery succeeded); null until then, and left out of API answers while null.
   */
  registration_completed_at: string | null;
  /** The primary identity first, then linked accounts (SPEC §2.12). */
  identities: UserIdentity[];
  created_at: string;
  updated_at: string;
}

/** A user with the bcrypt hash, for the worker's password check only. */
export interface UserWithSecret extends UserRecord {
  password_hash: string | null;
}

/**
 * An account whose failed logins are counted in its own user object (a linked secondary included): what
 * GET/DELETE /api/v2/user-blocks read and lift.
 */
export interface LoginAccount {
  user_id: string;
  connection: string;
  email: string | null;
  username: string | null;
  phone_number: string | null;
}

/** A user to create: everything the worker validated, the password already hashed (never in the object). */
export interface NewUser {
  user_id: string;
  connection: string;
  email: string | null;
  email_verified: boolean;
  password_hash: string | null;
  username?: string | null;
  phone_number?: string | null;
  phone_verified?: boolean;
  name?: string | null;
  given_name?: string | null;
  family_name?: string | null;
  nickname?: string | null;
  picture?: string | null;
  blocked?: boolean;
  app_metadata?: Record<string, Json>;
  user_metadata?: Record<string, Json>;
}

/** Profile fields a PATCH replaces (null unsets; SPEC §4.2). */
export type UserFieldPatch = Partial<
  Pick<
    UserRecord,
    | "email"
    | "email_verified"
    | "username"
    | "phone_number"
    | "phone_verified"
    | "name"
    | "given_name"
    | "family_name"
    | "nickname"
    | "picture"
    | "blocked"
  >
>;

/**
 * PATCH /users/{id} as the worker prepared it: replaced fields, metadata merged key by key at the top level
 * (a null value removes the key), an already hashed password, and the connection naming which identity of
 * the user is updated (absent: the primary).
 */
export interface UserPatch {
  fields: UserFieldPatch;
  app_metadata?: Record<string, Json | null> | null;
  user_metadata?: Record<string, Json | null> | null;
  password_hash?: string;
  connection?: string;
}

/** A filtered, paged read of primary users (GET /users): the `q` text was validated by the worker. */
export interface UserQuery {
  q?: string;
  connection?: string;
  ascending: boolean;
}

/** Which secondary account to link (POST /users/{id}/identities): the provider and the bare or full id. */
export interface IdentityRef {
  provider: string;
  user_id: string;
  /** Optional check: the secondary's connection id must be this one. */
  connection_id?: string;
}
