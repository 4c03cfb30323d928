import type { ErrorEntry } from "../classes";

/** Failures of mfa (a part of the one catalogue, errors/index.ts). */
export const MFA_ERRORS = {
  // Authentication methods and MFA (SPEC §2.4-2.5, §3.4, §4.2 guardian routes).
  inexistent_authentication_method: {
    status: 404,
    message: "The authentication method does not exist.",
    errorCode: "inexistent_authentication_method",
  },
  authentication_method_exists: { status: 409, message: "{detail}", errorCode: "authentication_method_conflict" },
  inexistent_mfa_transaction: { status: 404, message: "The MFA transaction does not exist or has expired.", errorCode: "inexistent_mfa_transaction" },
  mfa_challenge_required: {
    status: 403,
    message: "Verify one of your existing factors before adding another.",
    errorCode: "mfa_challenge_required",
  },
  inexistent_guardian_factor: { status: 404, message: 'Unknown factor "{name}"; factors: {factors}', errorCode: "inexistent_factor" },
  inexistent_sms_provider: { status: 404, message: 'Unknown SMS provider "{name}"; providers: twilio', errorCode: "inexistent_provider" },
  inexistent_enrollment: { status: 404, message: "The enrollment does not exist.", errorCode: "inexistent_enrollment" },
  ticket_factors_disabled: {
    status: 400,
    message: "Enrollment tickets need the otp or sms factor enabled (PUT /api/v2/guardian/factors/otp {\"enabled\": true})",
    errorCode: "mfa_factors_disabled",
  },
  ticket_factor_disabled: { status: 400, message: 'The factor "{factor}" is not enabled for this tenant', errorCode: "mfa_factors_disabled" },
  email_provider_missing: {
    status: 400,
    message: "No email provider is configured: set EMAIL_PROVIDER (or DEV_MESSAGE_SINK=1 for local development)",
    errorCode: "email_provider_missing",
  },
  inexistent_email_provider: { status: 404, message: "Email provider has not been configured", errorCode: "inexistent_email_provider" },
  email_provider_conflict: { status: 409, message: "An email provider is already configured (PATCH changes it)", errorCode: "email_provider_conflict" },
  // Email templates (issue 29 point 4).
  inexistent_email_template: { status: 404, message: "The template does not exist.", errorCode: "inexistent_email_template" },
  email_template_exists: { status: 409, message: "Template {template} already exists.", errorCode: "email_template_conflict" },
  email_template_invalid: { status: 400, message: "Payload validation error: '{detail}' on property {property}", errorCode: "invalid_body" },
  email_template_name_mismatch: {
    status: 400,
    message: "Payload validation error: 'template must match the path's templateName ({template})' on property template",
    errorCode: "invalid_body",
  },
  unknown_email_template: {
    status: 400,
    message: "Path validation error: 'must be one of the email template names' on property templateName ({template})",
    errorCode: "invalid_uri",
  },
} as const satisfies Record<string, ErrorEntry>;
