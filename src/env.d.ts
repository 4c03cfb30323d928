/** Secrets and optional variables that `wrangler types` cannot see (they live in .dev.vars or the dashboard). */
interface __BaseEnv_Env {
  ENCRYPTION_KEY?: string;
  CONTROL_PLANE_CLIENT_SECRET?: string;
  ADMIN_EMAIL?: string;
  ADMIN_PASSWORD?: string;
  MANAGEMENT_ALLOWED_ORIGINS?: string;
  BENCH_ROUTES?: string;
  /** "1": the development message sink (SMS and email kept in the tenant, shown at /__dev/messages and in the console). */
  DEV_MESSAGE_SINK?: string;
  /** Email provider for passwordless codes and enrollment mails: "sendgrid" (else the development sink, when on). */
  EMAIL_PROVIDER?: string;
  EMAIL_API_KEY?: string;
  EMAIL_FROM?: string;
  /** Base URL of the email provider's API (tests point it at a local receiver). */
  EMAIL_API_BASE?: string;
  /** Base URL of the Twilio-compatible SMS API. @default https://api.twilio.com */
  TWILIO_API_BASE?: string;
}
