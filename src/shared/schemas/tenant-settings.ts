import { z } from "zod";
import { ASYMMETRIC_SIGNING_ALGS } from "./resource-servers";

/**
 * PATCH /api/v2/tenants/settings: the reference platform's `default_audience`, and Gatehouse's
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
  })
  .partial()
  .refine((patch) => Object.keys(patch).length > 0, "At least one property must be provided");

export type TenantSettingsPatch = z.infer<typeof updateTenantSettingsBody>;

/** @default RS256 */
export const DEFAULT_SIGNING_ALG = "RS256";
