import { THEME_COLOUR, type ThemeInput } from "../../../shared/schemas/branding";

/** Whether a colour may reach the preview's SVG attributes (the API's own rule for theme colours). */
const safeColour = (value: unknown, fallback: string) => (typeof value === "string" && THEME_COLOUR.test(value) ? value : fallback);

/**
 * A sketch of the login widget in the theme's colours, as server-rendered SVG (presentation attributes, so the
 * console's strict CSP needs no inline style): page background, widget, title, two inputs and the button.
 * The real page opens from the links under it.
 */
export function LoginPreview(props: { theme: ThemeInput; tenant: string }) {
  const c = props.theme.colors;
  const colour = (value: unknown, fallback: string) => safeColour(value, fallback);
  const input = (y: number, label: string) => (
    <>
      <rect x="130" y={y} width="220" height="34" rx="3" fill={colour(c.input_background, "#ffffff")} stroke={colour(c.input_border, "#c9cace")} />
      <text x="142" y={y + 22} font-size="12" fill={colour(c.input_labels_placeholders, "#65676e")}>
        {label}
      </text>
    </>
  );
  return (
    <figure class="chart">
      <svg viewBox="0 0 480 300" width="480" role="img" aria-labelledby="preview-title">
        <title id="preview-title">{`Sketch of the login page of ${props.tenant} in its theme colours`}</title>
        <rect width="480" height="300" fill={colour(props.theme.page_background.background_color, "#000000")} />
        <rect x="110" y="24" width="260" height="252" rx="6" fill={colour(c.widget_background, "#ffffff")} stroke={colour(c.widget_border, "#c9cace")} />
        <text x="240" y="70" font-size="20" text-anchor="middle" fill={colour(c.header, "#1e212a")}>
          Welcome
        </text>
        <text x="240" y="94" font-size="12" text-anchor="middle" fill={colour(c.body_text, "#1e212a")}>
          {`Log in to ${props.tenant}`}
        </text>
        {input(112, "Email address")}
        {input(156, "Password")}
        <rect x="130" y="204" width="220" height="36" rx="3" fill={colour(c.primary_button, "#635dff")} />
        <text x="240" y="227" font-size="13" text-anchor="middle" fill={colour(c.primary_button_label, "#ffffff")}>
          Continue
        </text>
        <text x="240" y="262" font-size="11" text-anchor="middle" fill={colour(c.links_focused_components, "#635dff")}>
          Forgot password?
        </text>
      </svg>
      <figcaption>A sketch in the saved theme's colours; the real page also applies fonts, borders and the template.</figcaption>
    </figure>
  );
}
