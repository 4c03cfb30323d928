import { z } from "zod";
import { toBase64Url, utf8 } from "../crypto/encoding";
import { stringMetadata } from "./string-metadata";

/**
 * Refresh tokens as the management API writes them (SPEC §2.8): the reference platform's
 * `refresh_token_metadata` (PATCH /refresh-tokens/{id}) and its bulk revocation (POST /refresh-tokens/revoke).
 * The record itself is `RefreshTokenRecord` (src/shared/types/refresh.ts): it crosses RPC to the user object.
 */

/** `refresh_token_metadata`: an object of strings; `null` or `{}` clears it. */
export const refreshTokenMetadata = stringMetadata("refresh_token_metadata");

/** PATCH /refresh-tokens/{id}: metadata is the only writable property, and the body must name it. */
export const updateRefreshTokenBody = z
  .strictObject({ refresh_token_metadata: refreshTokenMetadata.nullable().optional() })
  .refine((b) => b.refresh_token_metadata !== undefined, "The body must change at least one property (refresh_token_metadata)");
export type UpdateRefreshTokenBody = z.infer<typeof updateRefreshTokenBody>;

/** The longest management id: `rt_` + 22 characters, a dot, and base64url(user_id) of at most 400 characters. */
const MAX_MANAGEMENT_ID_CHARS = 426;

/**
 * POST /refresh-tokens/revoke: exactly one of `ids`; `user_id`; `user_id` + `client_id`;
 * `user_id` + `client_id` + `audience`; `client_id` alone (every user's tokens of that client: recorded once on
 * the client, met by each family at its next use, see `clientTokensRevokedBefore`).
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
    if (!named.length) return fail("Exactly one of ids, user_id, user_id + client_id, user_id + client_id + audience or client_id is required");
    if (b.audience !== undefined && (b.user_id === undefined || b.client_id === undefined)) {
      return fail("audience requires both user_id and client_id");
    }
  });
export type RevokeRefreshTokensBody = z.infer<typeof revokeRefreshTokensBody>;

/** The facts of the login that produced a family; the refresh grant reads these, not the login session. */
export interface RefreshLogin {
  organization?: string;
  connection?: string;
  strategy?: string;
  /** Seconds since the epoch, for the ID token's auth_time. */
  auth_time?: number;
  /**
   * RFC 9449 §5: the thumbprint of the DPoP key a public client's family is bound to; every rotation must
   * come with a proof of that key.
   */
  dpop_jkt?: string;
}

/** The reference platform's device facts of a token. */
export interface RefreshDevice {
  initial_ip?: string;
  initial_user_agent?: string;
  last_ip?: string;
  last_user_agent?: string;
}

/** A refresh token as the grant and the management API see it (never its hash, family or rotation links). */
export interface RefreshTokenRecord {
  id: string;
  user_id: string;
  client_id: string;
  session_id: string | null;
  scope: string;
  audience: string | null;
  login: RefreshLogin;
  device: RefreshDevice;
  created_at: string;
  expires_at: string | null;
  idle_expires_at: string | null;
  last_exchanged_at: string | null;
  revoked_at: string | null;
  /** The reference platform's `refresh_token_metadata`: string values, `{}` when unset (shared by the family). */
  metadata: Record<string, string>;
}

/**
 * A refresh token's id on the management API (GET /refresh-tokens/{id}) and in a post-login action's
 * `event.refresh_token.id`: the token's id and its user, so a read reaches the user's object without a
 * tenant-wide index.
 */
export const refreshTokenApiId = (t: Pick<RefreshTokenRecord, "id" | "user_id">) => `${t.id}.${toBase64Url(utf8(t.user_id))}`;

/** `event.refresh_token` of a post-login action on the refresh-token exchange (the reference's fields). */
export function refreshTokenEvent(t: RefreshTokenRecord) {
  return {
    id: refreshTokenApiId(t),
    user_id: t.user_id,
    client_id: t.client_id,
    session_id: t.session_id,
    created_at: t.created_at,
    expires_at: t.expires_at,
    idle_expires_at: t.idle_expires_at,
    last_exchanged_at: t.last_exchanged_at,
    device: t.device,
    rotating: true,
    resource_servers: t.audience ? [{ audience: t.audience, scopes: t.scope }] : [],
    metadata: t.metadata,
  };
}
