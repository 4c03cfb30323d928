import { z } from "zod";
import { isReservedKey } from "../object-keys";

/**
 * The reference platform's small string metadata on sessions (`session_metadata`) and refresh tokens
 * (`refresh_token_metadata`): at most 25 properties; keys of 1-255 letters, digits, `_` or `-`; string values
 * of at most 255 characters. One schema for both, so the two cannot drift apart.
 */
export const MAX_METADATA_PROPERTIES = 25;
export const MAX_METADATA_CHARS = 255;

const KEY = /^[A-Za-z0-9_-]{1,255}$/;

/**
 * Checked as the caller sent it, before zod builds its copy (as user metadata is): a parsed record silently
 * drops a `__proto__` key, and a dropped key must be a 400, never a quiet change.
 */
const checkedRaw = z.unknown().superRefine((value, ctx) => {
  const key = value !== null && typeof value === "object" ? Object.keys(value).find(isReservedKey) : undefined;
  if (key !== undefined) ctx.addIssue({ code: "custom", message: `Metadata keys must not be ${key}` });
});

/** The metadata object named `field` in messages; `null` (clearing it) is the caller's `.nullable()`. */
export function stringMetadata(field: string) {
  return checkedRaw.pipe(
    z
      .record(z.string(), z.string({ error: `${field} values must be strings` }).max(MAX_METADATA_CHARS, `${field} values must be at most ${MAX_METADATA_CHARS} characters`), {
        error: (issue) => (issue.code === "invalid_type" ? `${field} must be an object of string values, or null` : undefined),
      })
      .superRefine((metadata, ctx) => {
        const keys = Object.keys(metadata);
        if (keys.length > MAX_METADATA_PROPERTIES) ctx.addIssue({ code: "custom", message: `At most ${MAX_METADATA_PROPERTIES} ${field} properties are allowed` });
        // No path on a bad key: the message would repeat a key of up to the whole body's length.
        if (keys.some((key) => !KEY.test(key))) ctx.addIssue({ code: "custom", message: `${field} keys must be 1-${MAX_METADATA_CHARS} letters, digits, '_' or '-'` });
      }),
  );
}
