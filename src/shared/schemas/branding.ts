import { z } from "zod";

/** Branding assets are fetched by browsers: web URLs only (no javascript: or data: URLs). */
const webUrl = z.url({ protocol: /^https?$/, message: "must be an http or https URL" }).max(2048);

const colour = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, "colours must be #rgb or #rrggbb");

/** PATCH /api/v2/branding: fields replaced, colors and font merged key by key; null removes a value. */
export const updateBrandingBody = z
  .strictObject({
    logo_url: webUrl.nullable(),
    favicon_url: webUrl.nullable(),
    colors: z.strictObject({ primary: colour.nullable(), page_background: colour.nullable() }).partial().nullable(),
    font: z.strictObject({ url: webUrl.nullable() }).partial().nullable(),
  })
  .partial();

/** Universal-login branding (GET/PATCH /api/v2/branding), read by the login pages from the snapshot. */
export interface Branding {
  logo_url?: string;
  favicon_url?: string;
  colors?: { primary?: string; page_background?: string };
  font?: { url?: string };
}

/** PATCH /branding: fields replaced, `colors` and `font` merged key by key; null removes. */
export interface BrandingPatch {
  logo_url?: string | null;
  favicon_url?: string | null;
  colors?: { primary?: string | null; page_background?: string | null } | null;
  font?: { url?: string | null } | null;
}
