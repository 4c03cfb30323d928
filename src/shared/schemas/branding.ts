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

/**
 * The universal-login theme (`/api/v2/branding/themes`, issue 29 point 5), in the reference platform's shape:
 * `borders`, `colors`, `fonts`, `page_background` and `widget` are required on create and on update (PATCH
 * sends the whole theme, as the reference's SDKs do), `displayName` optional. Every value that reaches the
 * login pages' style sheet is constrained here (hex colours, numbers in the documented ranges, enums, https
 * URLs) and checked again when the page is rendered (src/worker/login/theme/theme-css.ts).
 */

/** `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`: nothing else can reach CSS. */
export const THEME_COLOUR = /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
const themeColour = z.string().regex(THEME_COLOUR, "must be a hex colour (#rgb or #rrggbb)");

/** An https URL (the reference's pattern) or the empty string for "none". */
const httpsUrlOrEmpty = z.union([
  z.literal(""),
  z.url({ protocol: /^https$/, message: "must be an https URL or an empty string" }).max(2048),
]);

const range = (min: number, max: number) => z.number().min(min).max(max);
const style = z.enum(["pill", "rounded", "sharp"]);
const align = z.enum(["center", "left", "right"]);

export const themeBorders = z.strictObject({
  button_border_radius: range(1, 10),
  button_border_weight: range(0, 10),
  buttons_style: style,
  input_border_radius: range(0, 10),
  input_border_weight: range(0, 3),
  inputs_style: style,
  show_widget_shadow: z.boolean(),
  widget_border_weight: range(0, 10),
  widget_corner_radius: range(0, 50),
});

export const THEME_REQUIRED_COLOURS = [
  "body_text",
  "error",
  "header",
  "icons",
  "input_background",
  "input_border",
  "input_filled_text",
  "input_labels_placeholders",
  "links_focused_components",
  "primary_button",
  "primary_button_label",
  "secondary_button_border",
  "secondary_button_label",
  "success",
  "widget_background",
  "widget_border",
] as const;

export const themeColors = z.strictObject({
  ...Object.fromEntries(THEME_REQUIRED_COLOURS.map((k) => [k, themeColour])),
  base_focus_color: themeColour.optional(),
  base_hover_color: themeColour.optional(),
  read_only_background: themeColour.optional(),
  captcha_widget_theme: z.enum(["auto", "dark", "light"]).optional(),
} as Record<(typeof THEME_REQUIRED_COLOURS)[number], typeof themeColour> & {
  base_focus_color: z.ZodOptional<typeof themeColour>;
  base_hover_color: z.ZodOptional<typeof themeColour>;
  read_only_background: z.ZodOptional<typeof themeColour>;
  captcha_widget_theme: z.ZodOptional<z.ZodEnum<{ auto: "auto"; dark: "dark"; light: "light" }>>;
});

/** A text style: bold or not, and a size in percent of the reference text size. */
const font = (min: number, max: number) => z.strictObject({ bold: z.boolean(), size: range(min, max) });

export const themeFonts = z.strictObject({
  body_text: font(0, 150),
  buttons_text: font(0, 150),
  font_url: httpsUrlOrEmpty,
  input_labels: font(0, 150),
  links: font(0, 150),
  links_style: z.enum(["normal", "underlined"]),
  reference_text_size: range(12, 24),
  subtitle: font(0, 150),
  title: font(75, 150),
});

export const themePageBackground = z.strictObject({
  background_color: themeColour,
  background_image_url: httpsUrlOrEmpty,
  page_layout: align,
});

export const themeWidget = z.strictObject({
  header_text_alignment: align,
  logo_height: range(1, 100),
  logo_position: z.enum(["center", "left", "right", "none"]),
  logo_url: httpsUrlOrEmpty,
  social_buttons_layout: z.enum(["bottom", "top"]),
});

/** POST and PATCH /branding/themes(/{themeId}): the whole theme. */
export const themeBody = z.strictObject({
  borders: themeBorders,
  colors: themeColors,
  // The reference refuses angle brackets in the name: it is shown in the dashboard.
  displayName: z.string().min(1).max(2048).regex(/^[^<>]*$/, "must not contain < or >").optional(),
  fonts: themeFonts,
  page_background: themePageBackground,
  widget: themeWidget,
});

export type ThemeInput = z.infer<typeof themeBody>;

/** A stored theme, as every route answers it. */
export interface BrandingTheme extends Omit<ThemeInput, "displayName"> {
  themeId: string;
  displayName: string;
}
