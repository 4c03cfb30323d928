import { z } from "zod";
import type { Json } from "../types";

/**
 * The tenant's email provider (`/api/v2/emails/provider`, the reference platform's shape): the provider that
 * sends the tenant's email (MFA and passwordless codes). Gatehouse sends through SendGrid's v3 API (and
 * compatible relays), so `sendgrid` is the one name accepted; the others of the reference platform are
 * refused with 400 rather than stored and never used.
 */
export const EMAIL_PROVIDER_NAMES = ["sendgrid"] as const;

const email = z.string().max(320).email();

/** Credentials: the secret `api_key` (write-only, encrypted at rest) and the reference platform's public fields. */
const credentials = z.strictObject({
  api_key: z.string().min(1).max(1024),
  api_user: z.string().max(256).optional(),
  region: z.string().max(64).optional(),
  smtp_host: z.string().max(256).optional(),
  smtp_port: z.number().int().min(1).max(65535).optional(),
  smtp_user: z.string().max(256).optional(),
});

/** Provider-specific settings, stored as given (bounded). */
const settings = z.record(z.string().max(128), z.unknown()).refine((s) => JSON.stringify(s).length <= 10_000, "settings are at most 10000 characters");

/** POST /emails/provider: `name` and `credentials` required. */
export const createEmailProviderBody = z.strictObject({
  name: z.enum(EMAIL_PROVIDER_NAMES),
  enabled: z.boolean().optional(),
  default_from_address: email.optional(),
  credentials,
  settings: settings.optional(),
});

/** PATCH /emails/provider: any field; `credentials` replaces the stored ones whole. */
export const updateEmailProviderBody = z
  .strictObject({
    name: z.enum(EMAIL_PROVIDER_NAMES).optional(),
    enabled: z.boolean().optional(),
    default_from_address: email.optional(),
    credentials: credentials.optional(),
    settings: settings.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, "the body must change at least one field");

export type CreateEmailProviderInput = z.infer<typeof createEmailProviderBody>;
export type UpdateEmailProviderInput = z.infer<typeof updateEmailProviderBody>;

/** The public credential fields (never `api_key`). */
export type EmailProviderPublicCredentials = Omit<z.infer<typeof credentials>, "api_key">;

/** The stored provider: the API output plus the sealed secret. */
export interface EmailProviderRecord {
  name: (typeof EMAIL_PROVIDER_NAMES)[number];
  enabled: boolean;
  default_from_address: string | null;
  credentials: EmailProviderPublicCredentials;
  settings: Record<string, Json>;
  /** `api_key`, sealed by the worker (encryptionContext.emailProvider). */
  api_key_enc: string;
  created_at: string;
  updated_at: string;
}
