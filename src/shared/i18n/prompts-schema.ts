/**
 * The reference platform's prompts resources (issue 29 point 3), stored as one tenant setting (`prompts`)
 * and read with the configuration snapshot: the login pages' settings, the tenant's custom text per prompt
 * and language, and the partials inserted at the reference's insertion points.
 */
import { z } from "zod";
import type { CustomTextStore } from "../i18n/catalogue";

export const UNIVERSAL_LOGIN_EXPERIENCES = ["new", "classic"] as const;

/** PATCH /api/v2/prompts (the reference's UpdateSettingsRequestContent). */
export const updatePromptsBody = z
  .strictObject({
    universal_login_experience: z.enum(UNIVERSAL_LOGIN_EXPERIENCES, { message: "universal_login_experience must be one of new, classic" }),
    identifier_first: z.boolean({ message: "identifier_first must be a boolean" }).nullable(),
    webauthn_platform_first_factor: z.boolean({ message: "webauthn_platform_first_factor must be a boolean" }).nullable(),
  })
  .partial()
  .refine((patch) => Object.keys(patch).length > 0, "At least one property must be provided");

export type PromptsSettingsPatch = z.output<typeof updatePromptsBody>;

export interface PromptsSettings {
  universal_login_experience: (typeof UNIVERSAL_LOGIN_EXPERIENCES)[number];
  identifier_first: boolean;
  webauthn_platform_first_factor: boolean;
}

/** @default new universal login, identifier and password together, passkeys not a first factor */
export const PROMPTS_DEFAULTS: PromptsSettings = { universal_login_experience: "new", identifier_first: false, webauthn_platform_first_factor: false };

/** Partials: prompt → screen → insertion point → HTML-free text (escaped when rendered). */
export type PartialsStore = Record<string, Record<string, Record<string, string>>>;

/** What the `prompts` setting holds. */
export interface PromptsRecord {
  settings?: Partial<PromptsSettings>;
  custom_text?: CustomTextStore;
  partials?: PartialsStore;
}
