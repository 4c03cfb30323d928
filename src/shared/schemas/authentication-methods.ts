import { z } from "zod";

/**
 * POST /api/v2/users/{id}/authentication-methods (SPEC §4.2 bodies; the reference platform's
 * `CreateUserAuthenticationMethodRequestContent`). One strict object per type: a field of another type
 * (a phone number on a TOTP method) is refused rather than silently stored.
 */

/** Shortest TOTP secret accepted: 16 base32 characters (80 bits, what authenticator apps commonly issue). */
export const MIN_TOTP_SECRET_CHARS = 16;

/** A base32 (RFC 4648 §6) TOTP secret, normalized: spaces dropped, upper case, padding removed. */
export const totpSecret = z
  .string()
  .max(256)
  .transform((s) => s.replace(/[\s-]/g, "").toUpperCase().replace(/=+$/, ""))
  .refine((s) => /^[A-Z2-7]+$/.test(s), "totp_secret must be base32 (RFC 4648: A-Z and 2-7)")
  .refine((s) => s.length >= MIN_TOTP_SECRET_CHARS, `totp_secret must be at least ${MIN_TOTP_SECRET_CHARS} base32 characters`);

/**
 * A phone number in E.164 form (`+` and 8-15 digits); spaces, dots, hyphens and parentheses a person types
 * are dropped first.
 */
export const phoneNumber = z
  .string()
  .min(2)
  .max(30)
  .transform((s) => s.replace(/[\s().-]/g, ""))
  .refine((s) => /^\+[1-9]\d{7,14}$/.test(s), "phone_number must be in E.164 format, e.g. +14155550100");

/** base64url or base64 (the reference platform documents base64), normalized to unpadded base64url. */
const base64Bytes = (field: string, maxBytes: number) =>
  z
    .string()
    .min(1)
    .max(Math.ceil((maxBytes * 4) / 3) + 4)
    .refine((s) => /^[A-Za-z0-9_+/-]+={0,2}$/.test(s), `${field} must be base64url`)
    .transform((s) => s.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""))
    .refine((s) => s.length % 4 !== 1, `${field} must be base64url`);

export const TRANSPORTS = ["internal", "usb", "ble", "nfc", "hybrid"] as const;

/** Unpaired UTF-16 surrogates: not text (they cannot be encoded as UTF-8 and would be stored mangled). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A label a person typed: trimmed, 1-255 characters, no control characters, well-formed Unicode. */
const label = z
  .string()
  .trim()
  .min(1)
  .max(255)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "labels cannot contain control characters")
  .refine((s) => !LONE_SURROGATE.test(s), "labels must be well-formed Unicode");
const common = { name: label.optional(), confirmed: z.boolean().optional() };

const totpBody = z.strictObject({ type: z.literal("totp"), totp_secret: totpSecret, ...common });

const phoneBody = z.strictObject({
  type: z.literal("phone"),
  phone_number: phoneNumber,
  preferred_authentication_method: z.enum(["sms", "voice"]).optional(),
  ...common,
});

const webauthnFields = {
  /** SPEC §2.4 name; `key_id` is the reference platform's name for the same value. */
  credential_id: base64Bytes("credential_id", 1023).optional(),
  key_id: base64Bytes("key_id", 1023).optional(),
  public_key: base64Bytes("public_key", 1024),
  sign_count: z.number().int().min(0).max(2 ** 32 - 1).optional(),
  credential_backed_up: z.boolean().optional(),
  credential_device_type: z.enum(["single_device", "multi_device"]).optional(),
  transports: z.array(z.enum(TRANSPORTS)).max(TRANSPORTS.length).optional(),
  friendly_name: label.optional(),
  aaguid: z.string().regex(/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/, "aaguid must be a UUID").optional(),
  relying_party_identifier: z.string().min(1).max(253).regex(/^[a-z0-9.-]+$/i, "relying_party_identifier must be a host name").optional(),
  user_handle: z.string().min(1).max(128).optional(),
  user_agent: z.string().max(512).optional(),
  identity_user_id: z.string().max(255).optional(),
  ...common,
};

const withCredentialId = <T extends { credential_id?: string; key_id?: string }>(body: T, ctx: z.RefinementCtx) => {
  if (!body.credential_id && !body.key_id) ctx.addIssue({ code: "custom", message: "credential_id (or key_id) is required", path: ["credential_id"] });
  if (body.credential_id && body.key_id && body.credential_id !== body.key_id) {
    ctx.addIssue({ code: "custom", message: "credential_id and key_id differ", path: ["key_id"] });
  }
};

const webauthnBody = (type: "webauthn-roaming" | "webauthn-platform" | "passkey") =>
  z.strictObject({ type: z.literal(type), ...webauthnFields }).superRefine(withCredentialId);

export const createAuthenticationMethodBody = z.discriminatedUnion("type", [
  totpBody,
  phoneBody,
  webauthnBody("webauthn-roaming"),
  webauthnBody("webauthn-platform"),
  webauthnBody("passkey"),
]);

export type CreateAuthenticationMethodInput = z.infer<typeof createAuthenticationMethodBody>;

/** The method types of SPEC §2.4 (the guardian factor of each: SPEC §2.5). */
export type AuthenticationMethodType = "totp" | "phone" | "webauthn-roaming" | "webauthn-platform" | "passkey" | "recovery-code";

/** WebAuthn transports (WebAuthn Level 3 §5.8.4) the spec lets a credential declare. */
export type CredentialTransport = "internal" | "usb" | "ble" | "nfc" | "hybrid";

/**
 * A stored authentication method as it crosses RPC. The TOTP secret stays an AES-GCM ciphertext (the worker
 * opens it to verify a code and never shows it); WebAuthn methods carry only public credential data.
 */
export interface AuthenticationMethodRecord {
  id: string;
  user_id: string;
  type: AuthenticationMethodType;
  confirmed: boolean;
  name: string | null;
  totp_secret_enc: string | null;
  phone_number: string | null;
  /** Phone methods: `sms` or `voice` (only `sms` sends codes here). */
  preferred_authentication_method: string | null;
  /** base64url credential id (WebAuthn, passkey). */
  credential_id: string | null;
  /** base64url COSE public key. */
  public_key: string | null;
  sign_count: number | null;
  credential_backed_up: boolean | null;
  credential_device_type: "single_device" | "multi_device" | null;
  transports: CredentialTransport[] | null;
  aaguid: string | null;
  relying_party_identifier: string | null;
  user_handle: string | null;
  user_agent: string | null;
  created_at: string;
  enrolled_at: string | null;
  last_auth_at: string | null;
}

/**
 * The fields a method leaves empty unless its type fills them (phone: the number and its channel; WebAuthn:
 * the credential). Every place that builds a method spreads this first and sets what its type carries.
 */
export const EMPTY_METHOD_FIELDS = {
  totp_secret_enc: null,
  phone_number: null,
  preferred_authentication_method: null,
  credential_id: null,
  public_key: null,
  sign_count: null,
  credential_backed_up: null,
  credential_device_type: null,
  transports: null,
  aaguid: null,
  relying_party_identifier: null,
  user_handle: null,
  user_agent: null,
} satisfies Partial<AuthenticationMethodRecord>;

/** A method as the worker prepared it (id generated, TOTP secret already encrypted). */
export type NewAuthenticationMethod = Omit<AuthenticationMethodRecord, "created_at" | "enrolled_at" | "last_auth_at">;

/** PUT /api/v2/users/{id}/authentication-methods: the user's whole set of methods, replacing every other one. */
export const replaceAuthenticationMethodsBody = z.array(createAuthenticationMethodBody).max(20, "at most 20 authentication methods");

/** PATCH /api/v2/users/{id}/authentication-methods/{method_id}: a method's name, or how a phone is reached. */
export const updateAuthenticationMethodBody = z
  .strictObject({ name: z.string().trim().min(1).max(64), preferred_authentication_method: z.enum(["sms", "voice"]) })
  .partial()
  .refine((b) => Object.keys(b).length > 0, "give name or preferred_authentication_method");

export type AuthenticationMethodPatch = z.infer<typeof updateAuthenticationMethodBody>;
