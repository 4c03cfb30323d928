import { z } from "zod";
import { stringMetadata } from "./string-metadata";

/** A session's metadata: an object of string values, in the reference platform's documented limits. */
export const sessionMetadata = stringMetadata("session_metadata");

/**
 * PATCH /api/v2/sessions/{id}: `session_metadata` is the only writable field and replaces the metadata
 * whole; `null` or `{}` clears it.
 */
export const updateSessionBody = z
  .strictObject({ session_metadata: sessionMetadata.nullable().optional() })
  .refine((body) => Object.keys(body).length > 0, "The body must change at least one field");

export type SessionMetadata = z.infer<typeof sessionMetadata>;
export type UpdateSessionInput = z.infer<typeof updateSessionBody>;

export interface SessionRecord {
  id: string;
  secret_hash: string;
  user_id: string;
  client_ids: string[];
  authenticated_at: string;
  last_interaction_at: string;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

/**
 * POST /users/{id}/revoke-access: one session, or every session when `session_id` is absent. The session's
 * refresh tokens always end with it here (its revocation cascades), so `preserve_refresh_tokens: true` is refused.
 */
export const revokeAccessBody = z
  .strictObject({
    session_id: z.string().min(1).max(128).optional(),
    preserve_refresh_tokens: z.literal(false, { message: "preserve_refresh_tokens is not supported: ending a session here always revokes its refresh tokens" }).optional(),
  });
