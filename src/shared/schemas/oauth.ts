import { z } from "zod";

const param = z.string().max(8192);

/** Client authentication parameters accepted in the body (RFC 6749 §2.3.1, RFC 7523 §2.2). */
const clientAuth = {
  client_id: param.optional(),
  client_secret: param.optional(),
  client_assertion: param.optional(),
  client_assertion_type: param.optional(),
};

/**
 * Token request parameters per grant (SPEC §4.1). They validate /oauth/token and generate its OpenAPI
 * description. Unknown parameters are ignored, as RFC 6749 §3.2 requires.
 */
export const tokenRequestSchemas = {
  client_credentials: z.looseObject({
    grant_type: z.literal("client_credentials"),
    audience: param.optional(),
    scope: param.optional(),
    ...clientAuth,
  }),
  authorization_code: z.looseObject({
    grant_type: z.literal("authorization_code"),
    code: param,
    redirect_uri: param,
    code_verifier: param.optional(),
    ...clientAuth,
  }),
  refresh_token: z.looseObject({
    grant_type: z.literal("refresh_token"),
    refresh_token: param,
    scope: param.optional(),
    organization: param.optional(),
    ...clientAuth,
  }),
  "urn:ietf:params:oauth:grant-type:token-exchange": z.looseObject({
    grant_type: z.literal("urn:ietf:params:oauth:grant-type:token-exchange"),
    subject_token: param,
    subject_token_type: param,
    scope: param.optional(),
    audience: param.optional(),
    requested_token_type: param.optional(),
    organization: param.optional(),
    ...clientAuth,
  }),
  "http://auth0.com/oauth/grant-type/passwordless/otp": z.looseObject({
    grant_type: z.literal("http://auth0.com/oauth/grant-type/passwordless/otp"),
    username: param,
    otp: param,
    realm: z.enum(["email", "sms"]),
    scope: param.optional(),
    audience: param.optional(),
    ...clientAuth,
  }),
  // The reference platform's MFA grants: complete a token request that answered `mfa_required`.
  "http://auth0.com/oauth/grant-type/mfa-otp": z.looseObject({
    grant_type: z.literal("http://auth0.com/oauth/grant-type/mfa-otp"),
    mfa_token: param,
    otp: param,
    ...clientAuth,
  }),
  "http://auth0.com/oauth/grant-type/mfa-oob": z.looseObject({
    grant_type: z.literal("http://auth0.com/oauth/grant-type/mfa-oob"),
    mfa_token: param,
    oob_code: param,
    binding_code: param.optional(),
    ...clientAuth,
  }),
  "http://auth0.com/oauth/grant-type/mfa-recovery-code": z.looseObject({
    grant_type: z.literal("http://auth0.com/oauth/grant-type/mfa-recovery-code"),
    mfa_token: param,
    recovery_code: param,
    ...clientAuth,
  }),
  // RFC 8628 §3.4: the device polls with the device_code it got from /oauth/device/code.
  "urn:ietf:params:oauth:grant-type:device_code": z.looseObject({
    grant_type: z.literal("urn:ietf:params:oauth:grant-type:device_code"),
    device_code: param,
    ...clientAuth,
  }),
} as const;

/** POST /oauth/device/code (RFC 8628 §3.1). */
export const deviceAuthorizationSchema = z.looseObject({
  scope: param.optional(),
  audience: param.optional(),
  ...clientAuth,
});

/** The device authorization grant type (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** The MFA grants (the client's `grant_types` must name the one it uses, SPEC §4.1 rule 2). */
export const MFA_GRANTS = {
  otp: "http://auth0.com/oauth/grant-type/mfa-otp",
  oob: "http://auth0.com/oauth/grant-type/mfa-oob",
  recoveryCode: "http://auth0.com/oauth/grant-type/mfa-recovery-code",
} as const;

export type SupportedGrant = keyof typeof tokenRequestSchemas;
