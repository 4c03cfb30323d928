/**
 * The universal-login theme (issue 29 point 5) turned into the login pages' CSS: custom properties the fixed
 * style sheet (pages/layout.tsx) reads, plus a few layout rules. Values were validated when the theme was
 * written (src/shared/schemas/branding-theme.ts) and are checked again here, because the snapshot may hold
 * anything an older writer stored: a colour must be hex, a number finite and clamped, an enum one of its
 * values, a URL https and percent-encoded. Nothing else reaches the style sheet, so a theme cannot close the
 * <style> element, inject markup or load a script. The CSS is computed once per stored theme object.
 */
import type { BrandingTheme } from "../../../shared/schemas/branding";

/** What a theme adds to a page: its CSS, its logo (null: none), and the font origin the CSP must allow. */
export interface ThemeStyle {
  css: string;
  /** undefined: the theme says nothing (the branding's logo applies); null: `logo_position: none`. */
  logoUrl?: string | null;
  fontOrigin: string | null;
  /** `widget.social_buttons_layout: top`: the login page puts its other ways in (connections, passkey) above the form. */
  socialButtonsTop?: boolean;
}

const HEX = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const asRecord = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const colour = (value: unknown): string | null => (typeof value === "string" && HEX.test(value) ? value.toLowerCase() : null);
const number = (value: unknown, min: number, max: number): number | null =>
  typeof value === "number" && Number.isFinite(value) ? Math.round(Math.min(max, Math.max(min, value)) * 100) / 100 : null;
const oneOf = <T extends string>(value: unknown, allowed: readonly T[]): T | null =>
  typeof value === "string" && (allowed as readonly string[]).includes(value) ? (value as T) : null;

/** An https URL, percent-encoded down to characters that cannot end a CSS string or a <style> element. */
function httpsUrl(value: unknown): string | null {
  if (typeof value !== "string" || value.length > 2048 || !value.startsWith("https://")) return null;
  let url: string;
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== "https:" || parsed.username || parsed.password) return null;
    url = parsed.toString();
  } catch {
    return null;
  }
  return url.replace(/[^A-Za-z0-9\-._~:/?#[\]@!$&*+,;=%]/g, (ch) => encodeURIComponent(ch).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
}

const COLOUR_VARS: readonly (readonly [string, string])[] = [
  ["primary_button", "--gh-primary"],
  ["primary_button_label", "--gh-on-primary"],
  ["body_text", "--gh-body-text"],
  ["body_text", "--gh-muted"],
  ["header", "--gh-header"],
  ["links_focused_components", "--gh-link"],
  ["input_background", "--gh-input-bg"],
  ["input_border", "--gh-input-border"],
  ["input_filled_text", "--gh-input-text"],
  ["input_labels_placeholders", "--gh-label"],
  ["error", "--gh-error"],
  ["success", "--gh-success"],
  ["icons", "--gh-icons"],
  ["widget_background", "--gh-widget-bg"],
  ["widget_border", "--gh-widget-border"],
  ["secondary_button_border", "--gh-secondary-border"],
  ["secondary_button_label", "--gh-secondary-label"],
  ["base_focus_color", "--gh-focus"],
  ["base_hover_color", "--gh-hover"],
];

/** Font groups: their size (percent of the reference size) and weight variables. */
const FONT_VARS: readonly (readonly [string, string])[] = [
  ["title", "title"],
  ["subtitle", "subtitle"],
  ["body_text", "body"],
  ["buttons_text", "button"],
  ["input_labels", "label"],
  ["links", "link"],
];

const radius = (style: unknown, px: number | null): string | null => {
  const s = oneOf(style, ["pill", "rounded", "sharp"] as const);
  if (s === "pill") return "9999px";
  if (s === "sharp") return "0";
  return px === null ? null : `${px}px`;
};

function build(theme: Record<string, unknown>): ThemeStyle {
  const vars: string[] = [];
  const rules: string[] = [];
  const set = (name: string, value: string | null) => {
    if (value !== null) vars.push(`${name}:${value}`);
  };
  const colors = asRecord(theme.colors);
  for (const [key, name] of COLOUR_VARS) set(name, colour(colors[key]));

  const borders = asRecord(theme.borders);
  set("--gh-button-radius", radius(borders.buttons_style, number(borders.button_border_radius, 0, 50)));
  set("--gh-input-radius", radius(borders.inputs_style, number(borders.input_border_radius, 0, 50)));
  const px = (v: unknown, max: number) => {
    const n = number(v, 0, max);
    return n === null ? null : `${n}px`;
  };
  set("--gh-button-border-w", px(borders.button_border_weight, 10));
  set("--gh-input-border-w", px(borders.input_border_weight, 3));
  set("--gh-widget-border-w", px(borders.widget_border_weight, 10));
  set("--gh-widget-radius", px(borders.widget_corner_radius, 50));
  if (borders.show_widget_shadow === false) set("--gh-widget-shadow", "none");

  const fonts = asRecord(theme.fonts);
  set("--gh-font-size", px(fonts.reference_text_size, 24));
  for (const [key, name] of FONT_VARS) {
    const f = asRecord(fonts[key]);
    const size = number(f.size, 0, 150);
    // A multiplier of the parent's size (the reference gives percent of the reference text size).
    set(`--gh-${name}-size`, size === null ? null : `${Math.round(size * 10) / 1000}`);
    if (typeof f.bold === "boolean") set(`--gh-${name}-weight`, f.bold ? "700" : "400");
  }
  const linksStyle = oneOf(fonts.links_style, ["normal", "underlined"] as const);
  if (linksStyle) set("--gh-link-decoration", linksStyle === "underlined" ? "underline" : "none");
  const fontUrl = httpsUrl(fonts.font_url);
  let fontOrigin: string | null = null;
  const origin = fontUrl ? new URL(fontUrl).origin : "";
  // The origin goes into the CSP header: only a plain host (punycode) and port.
  if (fontUrl && /^https:\/\/[a-z0-9.-]+(?::\d+)?$/.test(origin)) {
    fontOrigin = origin;
    rules.push(`@font-face{font-family:"gh-theme-font";src:url("${fontUrl}");font-display:swap}`);
    set("--gh-font", `"gh-theme-font",system-ui,-apple-system,"Segoe UI",Roboto,sans-serif`);
  }

  const background = asRecord(theme.page_background);
  set("--gh-page-bg", colour(background.background_color));
  const image = httpsUrl(background.background_image_url);
  if (image) set("--gh-page-image", `url("${image}")`);
  const layout = oneOf(background.page_layout, ["center", "left", "right"] as const);
  if (layout) set("--gh-page-align", layout === "left" ? "flex-start" : layout === "right" ? "flex-end" : "center");

  const widget = asRecord(theme.widget);
  set("--gh-header-align", oneOf(widget.header_text_alignment, ["center", "left", "right"] as const));
  set("--gh-logo-height", px(widget.logo_height, 100));
  const position = oneOf(widget.logo_position, ["center", "left", "right", "none"] as const);
  if (position === "left") rules.push(".logo{margin-left:0;margin-right:auto}");
  if (position === "right") rules.push(".logo{margin-left:auto;margin-right:0}");
  // The login page's alternatives to the password (other connections, passkey) above or below the form: in the
  // markup (pages/login-page.tsx), so that reading and tab order follow what is seen.
  const socialButtonsTop = oneOf(widget.social_buttons_layout, ["bottom", "top"] as const) === "top";

  const logoUrl = position === "none" ? null : httpsUrl(widget.logo_url) ?? undefined;
  const css = (vars.length ? `:root{${vars.join(";")}}` : "") + rules.join("");
  return { css, ...(logoUrl !== undefined ? { logoUrl } : {}), fontOrigin, ...(socialButtonsTop ? { socialButtonsTop } : {}) };
}

/**
 * The theme under an organization's branding (its logo and colours win over the tenant's theme on its
 * logins, as they win over the tenant's branding).
 */
export function themeUnder(theme: BrandingTheme, branding: { logo_url?: string; colors?: { primary?: string; page_background?: string } }): BrandingTheme {
  const { primary, page_background } = branding.colors ?? {};
  return {
    ...theme,
    colors: { ...theme.colors, ...(primary ? { primary_button: primary } : {}) },
    page_background: { ...theme.page_background, ...(page_background ? { background_color: page_background } : {}) },
    widget: { ...theme.widget, ...(branding.logo_url ? { logo_url: branding.logo_url } : {}) },
  };
}

const cache = new WeakMap<object, ThemeStyle>();

/** The theme's CSS, computed once per stored theme object (the snapshot keeps it until its next version). */
export function themeStyle(theme: BrandingTheme | null | undefined): ThemeStyle | null {
  if (!theme || typeof theme !== "object") return null;
  let style = cache.get(theme);
  if (!style) {
    style = build(theme as unknown as Record<string, unknown>);
    cache.set(theme, style);
  }
  return style;
}
