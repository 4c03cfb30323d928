import { z } from "zod";
import { ipOrRange } from "../attack-protection";

/**
 * Tenant settings that are one JSON document each, read with GET and written with PUT or PATCH in the
 * reference platform's shapes (issue 28 point 1): the guardian factors' templates and provider settings,
 * breached-password detection, bot detection, CAPTCHA, risk assessment and supplemental signals. A
 * document is stored whole under its key, a write is merged over what is stored (the reference platform's
 * PUTs of these settings replace the fields given), and `secrets` name the fields (dotted paths) sealed at
 * rest and never returned.
 */
export interface SettingsDocument {
  /** The `_settings` key suffix and the audit target id. */
  key: string;
  /** Paths serving the same document (the reference platform's `sms` and `phone` aliases). */
  paths: readonly string[];
  read: string;
  write: string;
  /** Write verbs the reference platform offers on these paths. */
  verbs: readonly ("put" | "patch")[];
  summary: string;
  /** A write body: fields given replace stored ones. */
  body: z.ZodType<Record<string, unknown>>;
  /** What a tenant that never wrote the document reads. */
  defaults: Record<string, unknown>;
  /** Dotted paths of secret fields: sealed at rest, never returned. */
  secrets?: readonly string[];
}

const text = (max: number) => z.string().min(1).max(max);
const templateText = text(1000).refine((s) => /\{\{\s*code\s*\}\}/.test(s), "The message must contain {{code}}");

/** The reference platform's default SMS texts (its Liquid variables are rendered by `renderSmsTemplate`). */
export const DEFAULT_SMS_TEMPLATES = {
  enrollment_message: "{{code}} is your verification code for {{tenant.friendly_name}}. Please enter this code to verify your enrollment.",
  verification_message: "{{code}} is your verification code for {{tenant.friendly_name}}",
};

const smsTemplates = z.strictObject({ enrollment_message: templateText, verification_message: templateText });

/** Codes Gatehouse sends by SMS are 6 digits and live 5 minutes (SPEC §5.5); these settings state that. */
export const OTP_FACTOR_SETTINGS = { otp_length: 6, otp_expiration_time: 300 };
const otpSettings = z.strictObject({
  otp_length: z.literal(6, { message: "otp_length is 6 here (codes are not configurable)" }).optional(),
  otp_expiration_time: z.literal(300, { message: "otp_expiration_time is 300 seconds here (codes are not configurable)" }).optional(),
});

const webauthnBase = {
  override_relying_party: z.boolean().optional(),
  relying_party_identifier: z.string().min(1).max(253).optional(),
};

const shieldsOf = <T extends string>(values: readonly [T, ...T[]]) => z.array(z.enum(values)).max(values.length);
const policy = z.enum(["never", "when_risky", "always"]);
const captchaProvider = z.looseObject({ site_key: z.string().max(512).optional(), secret: z.string().max(512).optional() });
const CAPTCHA_PROVIDERS = ["arkose", "auth_challenge", "hcaptcha", "friendly_captcha", "recaptcha_enterprise", "recaptcha_v2", "simple_captcha"] as const;

const guardianRead = "read:guardian_factors";
const guardianWrite = "update:guardian_factors";
const apRead = "read:attack_protection";
const apWrite = "update:attack_protection";

export const SETTINGS_DOCUMENTS: readonly SettingsDocument[] = [
  {
    key: "guardian_sms_templates",
    paths: ["/guardian/factors/sms/templates", "/guardian/factors/phone/templates"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put"],
    summary: "The SMS texts {enrollment_message, verification_message} ({{code}}, {{tenant.friendly_name}}); used by every MFA SMS",
    body: smsTemplates,
    defaults: DEFAULT_SMS_TEMPLATES,
  },
  {
    key: "guardian_phone_message_types",
    paths: ["/guardian/factors/phone/message-types"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put"],
    summary: 'How phone codes are delivered: ["sms"] (voice calls are not offered)',
    body: z.strictObject({
      message_types: z.array(z.literal("sms", { message: 'message_types may hold only "sms": voice calls are not offered' })).min(1).max(2),
    }),
    defaults: { message_types: ["sms"] },
  },
  {
    key: "guardian_phone_settings",
    paths: ["/guardian/factors/phone/settings"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put"],
    summary: "The phone factor's code length and lifetime (6 digits, 300 s; not configurable)",
    body: otpSettings,
    defaults: OTP_FACTOR_SETTINGS,
  },
  {
    key: "guardian_email_settings",
    paths: ["/guardian/factors/email/settings"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put"],
    summary: "The email factor's code length and lifetime (6 digits, 300 s; not configurable)",
    body: otpSettings,
    defaults: OTP_FACTOR_SETTINGS,
  },
  {
    key: "guardian_webauthn_roaming",
    paths: ["/guardian/factors/webauthn-roaming/settings"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["patch", "put"],
    summary: "Security keys: user_verification (discouraged, preferred, required) asked at registration and sign-in",
    body: z.strictObject({ ...webauthnBase, user_verification: z.enum(["discouraged", "preferred", "required"]).optional() }),
    defaults: { user_verification: "preferred", override_relying_party: false },
  },
  {
    key: "guardian_webauthn_platform",
    paths: ["/guardian/factors/webauthn-platform/settings"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["patch", "put"],
    summary: "Device biometrics: relying-party settings",
    body: z.strictObject(webauthnBase),
    defaults: { override_relying_party: false },
  },
  {
    key: "guardian_duo",
    paths: ["/guardian/factors/duo/settings"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put", "patch"],
    summary: "Duo settings {ikey, skey, host}: stored (skey sealed, never returned); the duo factor is not offered",
    body: z.strictObject({ ikey: text(256).optional(), skey: text(256).optional(), host: text(253).optional() }),
    defaults: {},
    secrets: ["skey"],
  },
  {
    key: "guardian_push_apns",
    paths: ["/guardian/factors/push-notification/providers/apns"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put", "patch"],
    summary: "APNs settings {sandbox, bundle_id, p12}: stored (p12 sealed); push notifications are not offered",
    body: z.strictObject({ sandbox: z.boolean().optional(), bundle_id: text(256).nullable().optional(), p12: text(20000).nullable().optional() }),
    defaults: { bundle_id: null, sandbox: false, enabled: false },
    secrets: ["p12"],
  },
  {
    key: "guardian_push_fcm",
    paths: ["/guardian/factors/push-notification/providers/fcm"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put", "patch"],
    summary: "FCM settings {server_key}: stored sealed; push notifications are not offered",
    body: z.strictObject({ server_key: text(4096).nullable().optional() }),
    defaults: {},
    secrets: ["server_key"],
  },
  {
    key: "guardian_push_fcmv1",
    paths: ["/guardian/factors/push-notification/providers/fcmv1"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put", "patch"],
    summary: "FCM v1 settings {server_credentials}: stored sealed; push notifications are not offered",
    body: z.strictObject({ server_credentials: text(20000).nullable().optional() }),
    defaults: {},
    secrets: ["server_credentials"],
  },
  {
    key: "guardian_push_sns",
    paths: ["/guardian/factors/push-notification/providers/sns"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put", "patch"],
    summary: "Amazon SNS settings: stored (aws_secret_access_key sealed); push notifications are not offered",
    body: z.strictObject({
      aws_access_key_id: text(128).nullable().optional(),
      aws_secret_access_key: text(256).nullable().optional(),
      aws_region: text(64).nullable().optional(),
      sns_apns_platform_application_arn: text(2048).nullable().optional(),
      sns_gcm_platform_application_arn: text(2048).nullable().optional(),
    }),
    defaults: { aws_access_key_id: null, aws_region: null, sns_apns_platform_application_arn: null, sns_gcm_platform_application_arn: null },
    secrets: ["aws_secret_access_key"],
  },
  {
    key: "guardian_push_selected_provider",
    paths: ["/guardian/factors/push-notification/selected-provider"],
    read: guardianRead,
    write: guardianWrite,
    verbs: ["put"],
    summary: "The push-notification provider: guardian, sns or direct (stored; push notifications are not offered)",
    body: z.strictObject({ provider: z.enum(["guardian", "sns", "direct"]) }),
    defaults: { provider: "guardian" },
  },
  {
    key: "guardian_settings",
    paths: ["/guardian/settings"],
    read: "read:mfa_policies",
    write: "update:mfa_policies",
    verbs: ["put"],
    summary: "MFA session settings: the remember-me checkbox and the MFA session timeouts (seconds)",
    body: z.strictObject({
      display_remember_me_checkbox: z.boolean().optional(),
      remember_me_default_value: z.boolean().optional(),
      mfa_session_inactivity_timeout: z.number().int().min(3600).max(30 * 86400).optional(),
      mfa_session_overall_timeout: z.number().int().min(3600).max(90 * 86400).optional(),
    }),
    defaults: { display_remember_me_checkbox: true, remember_me_default_value: false, mfa_session_inactivity_timeout: 30 * 86400, mfa_session_overall_timeout: 30 * 86400 },
  },
  {
    key: "breached_password_detection",
    paths: ["/attack-protection/breached-password-detection"],
    read: apRead,
    write: apWrite,
    verbs: ["patch"],
    summary: "Breached-password detection: sign-ups and password changes checked against a bundled list of common breached passwords",
    body: z.strictObject({
      enabled: z.boolean().optional(),
      shields: shieldsOf(["block", "user_notification", "admin_notification"]).optional(),
      admin_notification_frequency: z.array(z.enum(["immediately", "daily", "weekly", "monthly"])).max(4).optional(),
      method: z.enum(["standard", "enhanced"]).optional(),
      stage: z
        .strictObject({
          "pre-user-registration": z.strictObject({ shields: shieldsOf(["block", "admin_notification"]) }).optional(),
          "pre-change-password": z.strictObject({ shields: shieldsOf(["block", "admin_notification"]) }).optional(),
        })
        .optional(),
    }),
    defaults: {
      enabled: false,
      shields: [],
      admin_notification_frequency: [],
      method: "standard",
      stage: { "pre-user-registration": { shields: [] }, "pre-change-password": { shields: [] } },
    },
  },
  {
    key: "bot_detection",
    paths: ["/attack-protection/bot-detection"],
    read: apRead,
    write: apWrite,
    verbs: ["patch"],
    summary: "Bot detection settings: stored and shown; not enforced (no CAPTCHA provider is wired to the login pages)",
    body: z.strictObject({
      bot_detection_level: z.enum(["low", "medium", "high"]).optional(),
      challenge_password_policy: policy.optional(),
      challenge_passwordless_policy: policy.optional(),
      challenge_password_reset_policy: policy.optional(),
      allowlist: z.array(ipOrRange).max(100).optional(),
      monitoring_mode_enabled: z.boolean().optional(),
    }),
    defaults: {
      bot_detection_level: "medium",
      challenge_password_policy: "never",
      challenge_passwordless_policy: "never",
      challenge_password_reset_policy: "never",
      allowlist: [],
      monitoring_mode_enabled: false,
    },
  },
  {
    key: "captcha",
    paths: ["/attack-protection/captcha"],
    read: apRead,
    write: apWrite,
    verbs: ["patch"],
    summary: "CAPTCHA provider settings: stored (secrets sealed, never returned) and shown; not enforced",
    body: z.strictObject({
      active_provider_id: z.enum(CAPTCHA_PROVIDERS).optional(),
      ...Object.fromEntries(CAPTCHA_PROVIDERS.map((p) => [p, captchaProvider.optional()])),
    }),
    defaults: { active_provider_id: "auth_challenge", auth_challenge: { fail_open: false } },
    secrets: CAPTCHA_PROVIDERS.map((p) => `${p}.secret`),
  },
  {
    key: "phone_provider_protection",
    paths: ["/attack-protection/phone-provider-protection"],
    read: apRead,
    write: apWrite,
    verbs: ["patch"],
    summary: "The SMS back-off strategy: default or exponential (stored and shown)",
    body: z.strictObject({ type: z.enum(["default", "exponential"]) }),
    defaults: { type: "default" },
  },
  {
    key: "risk_assessment",
    paths: ["/risk-assessments/settings"],
    read: apRead,
    write: apWrite,
    verbs: ["patch"],
    summary: "Risk assessment: stored and shown; no assessor runs here",
    body: z.strictObject({ enabled: z.boolean() }),
    defaults: { enabled: false },
  },
  {
    key: "risk_assessment_new_device",
    paths: ["/risk-assessments/settings/new-device"],
    read: apRead,
    write: apWrite,
    verbs: ["patch"],
    summary: "How many days a device is remembered for risk assessment (stored and shown)",
    body: z.strictObject({ remember_for: z.number().int().min(1).max(365) }),
    defaults: { remember_for: 30 },
  },
  {
    key: "supplemental_signals",
    paths: ["/supplemental-signals"],
    read: apRead,
    write: apWrite,
    verbs: ["patch"],
    summary: "Whether Akamai headers are read (stored and shown; Gatehouse reads no Akamai headers)",
    body: z.strictObject({ akamai_enabled: z.boolean() }),
    defaults: { akamai_enabled: false },
  },
];

/** A document by key (`settingsDocument("breached_password_detection")`). */
export function settingsDocument(key: string): SettingsDocument {
  const doc = SETTINGS_DOCUMENTS.find((d) => d.key === key);
  if (!doc) throw new Error(`unknown settings document ${key}`);
  return doc;
}

/** Breached-password detection as stored (the defaults merged). */
export interface BreachedPasswordSettings {
  enabled: boolean;
  shields: string[];
  admin_notification_frequency: string[];
  method: "standard" | "enhanced";
  stage: { "pre-user-registration": { shields: string[] }; "pre-change-password": { shields: string[] } };
}
