import { z } from "zod";

/** The passwordless OTP grant's type (SPEC §4.1; `http://{vendor_host}/...` with the reference platform's host). */
export const PASSWORDLESS_OTP_GRANT = "http://auth0.com/oauth/grant-type/passwordless/otp";

const param = z.string().max(8192);

/**
 * POST /passwordless/start (the reference platform's body): `connection` `email` with `email`, or `sms` with
 * `phone_number`; `send` is `code` (magic links are not offered); `authParams` are kept with the code and are
 * the grant's defaults (scope, audience).
 */
export const passwordlessStartBody = z
  .looseObject({
    client_id: z.string().min(1).max(256),
    client_secret: param.optional(),
    client_assertion: param.optional(),
    client_assertion_type: param.optional(),
    connection: z.enum(["email", "sms"], { message: 'connection must be "email" or "sms"' }),
    email: z.string().max(320).optional(),
    phone_number: z.string().max(30).optional(),
    send: z.enum(["code", "link"]).optional(),
    authParams: z.record(z.string().max(64), z.string().max(2048)).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.connection === "email" && !body.email) ctx.addIssue({ code: "custom", message: "email is required for the email connection", path: ["email"] });
    if (body.connection === "sms" && !body.phone_number) ctx.addIssue({ code: "custom", message: "phone_number is required for the sms connection", path: ["phone_number"] });
  });

export type PasswordlessStart = z.infer<typeof passwordlessStartBody>;

/** What the grant may take from the code's stored authParams. */
export const STORED_AUTH_PARAMS = ["scope", "audience", "nonce"] as const;
