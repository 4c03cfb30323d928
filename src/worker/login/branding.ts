/**
 * Universal-login branding (SPEC §2.6 shape: logo_url, colors.primary, colors.page_background), reduced to
 * values that are safe to put into a page. The tenant's strings never reach CSS or an attribute unchecked:
 * colours must be `#rgb` or `#rrggbb`, the logo an absolute http(s) URL; anything else is dropped and the
 * default applies.
 */

import { themeStyle } from "./theme/theme-css";

/** What the page layout may use, every field already validated. */
export interface PageBranding {
  /** Button and link colour, `#rrggbb` or `#rgb`. */
  primary: string;
  /** Readable text colour on top of `primary` (black or white, by contrast). */
  onPrimary: string;
  pageBackground: string;
  logoUrl: string | null;
  /** The theme's CSS (custom properties and layout rules, theme-css.ts), appended to the fixed sheet. */
  themeCss?: string;
  /** The origin of the theme's font file, which the page's CSP then allows. */
  fontOrigin?: string | null;
  /** The theme's `social_buttons_layout: top` (theme-css.ts). */
  socialButtonsTop?: boolean;
}

/** Defaults when the tenant has no (valid) branding. @default primary #3451b2, page background #f3f4f6 */
export const DEFAULT_BRANDING: PageBranding = {
  primary: "#3451b2",
  onPrimary: "#ffffff",
  pageBackground: "#f3f4f6",
  logoUrl: null,
};

const HEX_COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** The colour when it is exactly `#rgb` / `#rrggbb`, else null (never a raw tenant string in CSS). */
export function safeColour(value: unknown): string | null {
  return typeof value === "string" && HEX_COLOUR.test(value) ? value.toLowerCase() : null;
}

/** The URL when it is an absolute http(s) URL without credentials, else null. */
export function safeImageUrl(value: unknown): string | null {
  if (typeof value !== "string" || value.length > 2048) return null;
  try {
    const url = new URL(value);
    if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password) return null;
    return url.toString();
  } catch {
    return null;
  }
}

/** WCAG relative luminance of a validated hex colour. */
function luminance(hex: string): number {
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d).join("") : hex.slice(1);
  const channel = (i: number) => {
    const v = Number.parseInt(digits.slice(i, i + 2), 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4);
}

/** Black or white, whichever contrasts more with the background (WCAG 2.x contrast ratio). */
export function readableOn(hex: string): string {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000000" : "#ffffff";
}

const asRecord = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * Reads a tenant configuration's `branding` defensively (it may be absent or hold anything a writer stored)
 * and returns only validated values.
 */
export function pageBranding(config: { branding?: unknown; brandingTheme?: unknown } | null): PageBranding {
  // Per snapshot: the branding object (and theme) stay the same until the configuration changes.
  const key = config?.branding;
  const cached = key !== null && typeof key === "object" ? memo.get(key) : undefined;
  if (cached && cached.theme === config?.brandingTheme) return cached.value;
  const value = computeBranding(config);
  if (key !== null && typeof key === "object") memo.set(key, { theme: config?.brandingTheme, value });
  return value;
}

const memo = new WeakMap<object, { theme: unknown; value: PageBranding }>();

function computeBranding(config: { branding?: unknown; brandingTheme?: unknown } | null): PageBranding {
  const branding = asRecord(config?.branding);
  const colours = asRecord(branding.colors);
  const primary = safeColour(colours.primary) ?? DEFAULT_BRANDING.primary;
  // The theme (issue 29 point 5) overrides the branding's colours and logo through its own CSS.
  const theme = themeStyle(config?.brandingTheme as Parameters<typeof themeStyle>[0]);
  return {
    primary,
    onPrimary: readableOn(primary),
    pageBackground: safeColour(colours.page_background) ?? DEFAULT_BRANDING.pageBackground,
    logoUrl: theme?.logoUrl !== undefined ? theme.logoUrl : safeImageUrl(branding.logo_url),
    ...(theme ? { themeCss: theme.css, fontOrigin: theme.fontOrigin } : {}),
    ...(theme?.socialButtonsTop ? { socialButtonsTop: true } : {}),
  };
}
