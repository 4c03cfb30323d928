import { z } from "zod";
import { ASYMMETRIC_SIGNING_ALGS } from "./resource-servers";

/**
 * PATCH /api/v2/tenants/settings: the reference platform's `default_audience`,
 * `allow_organization_name_in_authentication_api` and `default_redirection_uri`, and Gatehouse's
 * `default_signing_alg` (the reference platform has no such tenant setting): the access-token algorithm of
 * APIs created without `signing_alg` and of tokens for no API. HS256 cannot be a tenant default: it needs
 * an API's own secret. null removes a value.
 */
export const updateTenantSettingsBody = z
  .strictObject({
    default_audience: z.string().trim().max(600).nullable(),
    default_signing_alg: z
      .enum(ASYMMETRIC_SIGNING_ALGS, { message: `default_signing_alg must be one of ${ASYMMETRIC_SIGNING_ALGS.join(", ")}` })
      .nullable(),
    // Issue 11: `organization` on /authorize also takes names, and tokens carry `org_name` (reference platform).
    allow_organization_name_in_authentication_api: z.boolean().nullable(),
    // The tenant's login route (reference platform): where invitation links point when the application has
    // no `initiate_login_uri`. https only, like the reference platform's.
    default_redirection_uri: z
      .url({ protocol: /^https$/, message: "default_redirection_uri must be an https URL" })
      .max(2048)
      .nullable(),
  })
  .partial()
  .refine((patch) => Object.keys(patch).length > 0, "At least one property must be provided");

export type TenantSettingsPatch = z.infer<typeof updateTenantSettingsBody>;

/** @default RS256 */
export const DEFAULT_SIGNING_ALG = "RS256";
