import { z } from "zod";

/**
 * Refresh tokens as the management API writes them (SPEC §2.8): the reference platform's
 * `refresh_token_metadata` (PATCH /refresh-tokens/{id}) and its bulk revocation (POST /refresh-tokens/revoke).
 * The record itself is `RefreshTokenRecord` (src/shared/types/refresh.ts): it crosses RPC to the user object.
 */

/** The reference platform's metadata limits: at most 25 properties, string values of at most 255 characters. */
export const MAX_METADATA_PROPERTIES = 25;
export const MAX_METADATA_VALUE_CHARS = 255;

const metadataKey = z.string().regex(/^[A-Za-z0-9_-]{1,255}$/, "Metadata keys must be 1-255 letters, digits, '_' or '-'");

const metadataValue = z
  .string({ error: "Metadata values must be strings" })
  .max(MAX_METADATA_VALUE_CHARS, `Metadata values must be at most ${MAX_METADATA_VALUE_CHARS} characters`);

/**
 * Checked as the caller sent it, before zod builds its copy (as user metadata is): a parsed record silently
 * drops a `__proto__` key, and a dropped key must be a 400, never a quiet change.
 */
const checkedRaw = z.unknown().superRefine((value, ctx) => {
  if (value !== null && typeof value === "object" && Object.hasOwn(value, "__proto__")) {
    ctx.addIssue({ code: "custom", message: "Metadata keys must not be __proto__" });
  }
});

/** `refresh_token_metadata`: an object of strings; `null` or `{}` clears it. */
export const refreshTokenMetadata = checkedRaw.pipe(
  z
    .record(metadataKey, metadataValue, {
      error: (issue) =>
        issue.code === "invalid_key"
          ? "Metadata keys must be 1-255 letters, digits, '_' or '-'"
          : issue.code === "invalid_type"
            ? "refresh_token_metadata must be an object of string values, or null"
            : undefined,
    })
    .refine((m) => Object.keys(m).length <= MAX_METADATA_PROPERTIES, `At most ${MAX_METADATA_PROPERTIES} metadata properties are allowed`),
);

/** PATCH /refresh-tokens/{id}: metadata is the only writable property, and the body must name it. */
export const updateRefreshTokenBody = z
  .strictObject({ refresh_token_metadata: refreshTokenMetadata.nullable().optional() })
  .refine((b) => b.refresh_token_metadata !== undefined, "The body must change at least one property (refresh_token_metadata)");
export type UpdateRefreshTokenBody = z.infer<typeof updateRefreshTokenBody>;

/** The longest management id: `rt_` + 22 characters, a dot, and base64url(user_id) of at most 400 characters. */
const MAX_MANAGEMENT_ID_CHARS = 426;

/**
 * POST /refresh-tokens/revoke: exactly one of `ids`; `user_id`; `user_id` + `client_id`;
 * `user_id` + `client_id` + `audience`. The reference platform also documents `client_id` alone (every user's
 * tokens of that client); tokens live in each user's own object with no tenant-wide index, so that form is
 * refused rather than half done.
 */
export const revokeRefreshTokensBody = z
  .strictObject({
    ids: z
      .array(z.string().min(1).max(MAX_MANAGEMENT_ID_CHARS))
      .min(1, "ids must name at least one refresh token")
      .max(100, "ids may name at most 100 refresh tokens")
      .optional(),
    user_id: z.string().min(1).max(300).optional(),
    client_id: z.string().min(1).max(64).optional(),
    audience: z.string().min(1).max(600).optional(),
  })
  .superRefine((b, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: "custom", message });
    const named = (["user_id", "client_id", "audience"] as const).filter((k) => b[k] !== undefined);
    if (b.ids !== undefined) {
      if (named.length) fail(`ids cannot be combined with ${named.join(", ")}`);
      return;
    }
    if (!named.length) return fail("Exactly one of ids, user_id, user_id + client_id or user_id + client_id + audience is required");
    if (b.audience !== undefined && (b.user_id === undefined || b.client_id === undefined)) {
      return fail("audience requires both user_id and client_id");
    }
    if (b.user_id === undefined) {
      fail("client_id alone is not supported here: name the user as well (user_id + client_id)");
    }
  });
export type RevokeRefreshTokensBody = z.infer<typeof revokeRefreshTokensBody>;
