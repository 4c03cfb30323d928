import { z } from "zod";

/** The reference platform's session metadata limits: at most 25 properties, keys and values at most 255 characters. */
export const SESSION_METADATA_MAX_PROPERTIES = 25;
export const SESSION_METADATA_MAX_LENGTH = 255;

/** Metadata keys: letters, digits, `_` and `-` only. */
const METADATA_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * A session's metadata: an object of string values (a nested object, number or boolean is refused), the
 * reference platform's documented limits on its size, key characters and lengths.
 */
export const sessionMetadata = z
  .record(z.string(), z.string({ error: "session metadata values must be strings" }).max(SESSION_METADATA_MAX_LENGTH, `session metadata values must not exceed ${SESSION_METADATA_MAX_LENGTH} characters`))
  .superRefine((metadata, ctx) => {
    const keys = Object.keys(metadata);
    if (keys.length > SESSION_METADATA_MAX_PROPERTIES) {
      ctx.addIssue({ code: "custom", message: `session metadata must not have more than ${SESSION_METADATA_MAX_PROPERTIES} properties` });
    }
    for (const key of keys) {
      if (key.length > SESSION_METADATA_MAX_LENGTH) {
        // No path: the message would repeat the whole over-long key.
        ctx.addIssue({ code: "custom", message: `session metadata keys must not exceed ${SESSION_METADATA_MAX_LENGTH} characters` });
      } else if (!METADATA_KEY.test(key)) {
        ctx.addIssue({ code: "custom", path: [key], message: "session metadata keys may contain only letters, digits, _ and -" });
      }
    }
  });

/**
 * PATCH /api/v2/sessions/{id}: `session_metadata` is the only writable field and replaces the metadata
 * whole; `null` or `{}` clears it.
 */
export const updateSessionBody = z
  .strictObject({ session_metadata: sessionMetadata.nullable().optional() })
  .refine((body) => Object.keys(body).length > 0, "The body must change at least one field");

export type SessionMetadata = z.infer<typeof sessionMetadata>;
export type UpdateSessionInput = z.infer<typeof updateSessionBody>;
