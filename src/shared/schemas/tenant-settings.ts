import { z } from "zod";
import { REFERENCE_LOCALES } from "../i18n/locales";
import { ASYMMETRIC_SIGNING_ALGS } from "./resource-servers";

const url = (field: string) => z.url({ protocol: /^https?$/, message: `${field} must be an http(s) URL` }).max(2048);
/** Session lifetimes in hours (the reference platform's unit), up to a year; minutes variants are converted. */
const hours = (field: string) =>
  z.number({ message: `${field} must be a number of hours` }).min(1 / 60, `${field} must be at least one minute`).max(8760, `${field} must be at most 8760 hours`);
const minutes = (field: string) =>
  z.number({ message: `${field} must be a number of minutes` }).int(`${field} must be whole minutes`).min(1).max(525_600, `${field} must be at most 525600 minutes`);
const LOCALE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** The reference platform's sandbox versions (actions runtime); Gatehouse runs one runtime for all. */
export const SANDBOX_VERSIONS = ["22", "18", "16", "12"] as const;

/**
 * PATCH /api/v2/tenants/settings: the reference platform's tenant settings (UpdateTenantSettingsRequestContent)
 * and Gatehouse's `default_signing_alg` (the reference platform has no such tenant setting): the
 * access-token algorithm of APIs created without `signing_alg` and of tokens for no API. HS256 cannot be a
 * tenant default: it needs an API's own secret. null removes a value. Unknown properties are refused.
 */
export const updateTenantSettingsBody = z
  .strictObject({
    default_audience: z.string().trim().max(600).nullable(),
    default_directory: z.string().trim().max(128).nullable(),
    default_signing_alg: z
      .enum(ASYMMETRIC_SIGNING_ALGS, { message: `default_signing_alg must be one of ${ASYMMETRIC_SIGNING_ALGS.join(", ")}` })
      .nullable(),
    friendly_name: z.string().trim().max(255).nullable(),
    picture_url: url("picture_url").nullable(),
    support_email: z.email({ message: "support_email must be an email address" }).max(320).nullable(),
    support_url: url("support_url").nullable(),
    allowed_logout_urls: z.array(z.string().max(2048)).max(100).nullable(),
    session_lifetime: hours("session_lifetime").nullable(),
    idle_session_lifetime: hours("idle_session_lifetime").nullable(),
    session_lifetime_in_minutes: minutes("session_lifetime_in_minutes"),
    idle_session_lifetime_in_minutes: minutes("idle_session_lifetime_in_minutes"),
    ephemeral_session_lifetime: hours("ephemeral_session_lifetime").nullable(),
    idle_ephemeral_session_lifetime: hours("idle_ephemeral_session_lifetime").nullable(),
    sandbox_version: z.enum(SANDBOX_VERSIONS, { message: `sandbox_version must be one of ${SANDBOX_VERSIONS.join(", ")}` }).nullable(),
    enabled_locales: z
      .array(
        z
          .string()
          .regex(LOCALE, "enabled_locales entries must be locale codes such as en or pt-BR")
          // The reference platform's universal-login languages only (issue 29 point 3).
          .refine((code) => REFERENCE_LOCALES.includes(code), { message: "enabled_locales entries must be supported languages (such as en, fr or pt-BR)" }),
      )
      .min(1, "enabled_locales must name at least one locale")
      .max(100)
      .nullable(),
    flags: z.record(z.string().regex(/^[a-z0-9_]{1,64}$/, "flag names are snake_case"), z.boolean({ message: "flags must be booleans" })),
    error_page: z.strictObject({ html: z.string().max(100_000).optional(), show_log_link: z.boolean().optional(), url: url("error_page.url").optional() }).nullable(),
    change_password: z.strictObject({ enabled: z.boolean().optional(), html: z.string().max(100_000).optional() }).nullable(),
    guardian_mfa_page: z.strictObject({ enabled: z.boolean().optional(), html: z.string().max(100_000).optional() }).nullable(),
    device_flow: z
      .strictObject({ charset: z.enum(["base20", "digits"]).optional(), mask: z.string().max(20).optional() })
      .nullable(),
    sessions: z.strictObject({ oidc_logout_prompt_enabled: z.boolean().optional() }).nullable(),
    oidc_logout: z.strictObject({ rp_logout_end_session_endpoint_discovery: z.boolean().optional() }),
    customize_mfa_in_postlogin_action: z.boolean().nullable(),
    // Issue 11: `organization` on /authorize also takes names, and tokens carry `org_name` (reference platform).
    allow_organization_name_in_authentication_api: z.boolean().nullable(),
    // The tenant's login route (reference platform): where invitation links point when the application has
    // no `initiate_login_uri`. https only, like the reference platform's.
    // Gatehouse (issue 32): the hosts tenant code (actions, database scripts) may call, `*.` for subdomains;
    // null or unset: any host the deployment's egress policy allows.
    egress_allowlist: z
      .array(
        z
          .string()
          .toLowerCase()
          .regex(/^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, "egress_allowlist entries are host names, optionally starting with *."),
      )
      .max(100, "egress_allowlist holds at most 100 hosts")
      .nullable(),
    default_redirection_uri: z
      .url({ protocol: /^https$/, message: "default_redirection_uri must be an https URL" })
      .max(2048)
      .nullable(),
  })
  .partial()
  .refine((patch) => Object.keys(patch).length > 0, "At least one property must be provided")
  // The minutes variants are the same settings in another unit: stored once, in hours.
  .transform(({ session_lifetime_in_minutes, idle_session_lifetime_in_minutes, ...rest }) => ({
    ...rest,
    ...(session_lifetime_in_minutes !== undefined ? { session_lifetime: session_lifetime_in_minutes / 60 } : {}),
    ...(idle_session_lifetime_in_minutes !== undefined ? { idle_session_lifetime: idle_session_lifetime_in_minutes / 60 } : {}),
  }));

/** What a tenant's settings read as when never set (the reference platform's defaults). */
export const TENANT_SETTINGS_DEFAULTS = {
  session_lifetime: 168,
  idle_session_lifetime: 72,
  sandbox_version: "22",
  enabled_locales: ["en"],
  flags: {},
} as const;

export type TenantSettingsPatch = z.output<typeof updateTenantSettingsBody>;

/** @default RS256 */
export const DEFAULT_SIGNING_ALG = "RS256";
