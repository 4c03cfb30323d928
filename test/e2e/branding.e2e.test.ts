import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { THEME } from "../helpers/theme";
import { browserSuite } from "./helpers/browser-suite";
import { axeResults, screenshot } from "./helpers/browser";

/**
 * Issue 29 point 5 in Chromium against `wrangler dev`: a theme and a page template set with the reference
 * platform's SDK (`auth0` 7: `branding.themes.create`, `branding.templates.updateUniversalLogin`) change
 * the rendered login page (computed styles, the template's markup around the card, the other ways in above the
 * form under social_buttons_layout: top), the themed page passes
 * axe-core, and a login through it still completes. The screenshot is kept in
 * test-results/screenshots/branding-themed-login.png.
 */

const random = () => randomBytes(6).toString("hex");
const PASSWORD = `Correct-Horse-${random()}`;

const TEMPLATE = `<!DOCTYPE html>
{% assign resolved_dir = dir | default: "auto" %}
<html lang="{{ locale }}" dir="{{ resolved_dir }}">
  <head>{%- auth0:head -%}</head>
  <body class="_widget-auto-layout">
    <header id="acme-header"><p>Acme Corp sign-in for {{ application.name }}</p></header>
    {%- auth0:widget -%}
    <footer id="acme-footer"><p>Page {{ prompt.name }} · {{ tenant.friendly_name }}</p></footer>
  </body>
</html>`;

describe("a theme and a page template set with the auth0 SDK change the login page", () => {
  const suite = browserSuite("branding.e2e", "Branded App");
  const { context, authorizeUrl } = suite;
  let { admin, callbacks } = suite;
  beforeAll(() => ({ admin, callbacks } = suite));

  it("the page shows the theme's colours and layout inside the template, passes axe, and logs in", { timeout: 180_000 }, async () => {
    // No external assets in a sandboxed run: no logo, font or background image URL.
    const theme = {
      ...THEME,
      fonts: { ...THEME.fonts, font_url: "" },
      // The other ways in above the form (social_buttons_layout: top).
      widget: { ...THEME.widget, logo_url: "", social_buttons_layout: "top" },
    } as unknown as Parameters<typeof admin.branding.themes.create>[0];
    const created = await admin.branding.themes.create(theme);
    expect(created.themeId).toMatch(/^[a-z0-9_-]+$/);
    expect(await admin.branding.themes.getDefault()).toMatchObject({ themeId: created.themeId, colors: { primary_button: "#7a1fa2" } });
    await expect(admin.branding.themes.create(theme)).rejects.toMatchObject({ statusCode: 409 });
    await admin.branding.templates.updateUniversalLogin({ template: TEMPLATE });
    expect(await admin.branding.templates.getUniversalLogin()).toEqual({ body: TEMPLATE });
    await expect(admin.branding.templates.updateUniversalLogin({ template: "<html><body>{%- auth0:widget -%}</body></html>" })).rejects.toMatchObject({
      statusCode: 400,
    });

    // An email-code connection beside the password one gives the page another way in to place.
    await admin.connections.create({ name: "email", strategy: "email", enabled_clients: [suite.app.client_id] } as unknown as Parameters<typeof admin.connections.create>[0]);
    const email = `branded-${random()}@example.com`;
    await admin.users.create({ connection: "Username-Password-Authentication", email, password: PASSWORD, email_verified: true });
    const { page } = await context("themed-login");
    await page.goto(authorizeUrl());
    await page.getByRole("heading", { name: "Welcome" }).waitFor();
    expect(await page.locator("#acme-header").innerText()).toBe("Acme Corp sign-in for Branded App");
    expect(await page.locator("#acme-footer").innerText()).toContain("Page login");
    const styles = await page.evaluate(() => {
      const css = (selector: string) => getComputedStyle(document.querySelector(selector) as Element);
      return {
        button: css("button[type=submit]").backgroundColor,
        buttonRadius: css("button[type=submit]").borderTopLeftRadius,
        heading: css("h1").color,
        headingAlign: css("h1").textAlign,
        card: css("main").backgroundColor,
        cardRadius: css("main").borderTopLeftRadius,
        page: css("body").backgroundColor,
        fontSize: css("body").fontSize,
      };
    });
    expect(styles).toEqual({
      button: "rgb(122, 31, 162)",
      buttonRadius: "4px",
      heading: "rgb(18, 52, 86)",
      headingAlign: "left",
      card: "rgb(255, 253, 245)",
      cardRadius: "20px",
      page: "rgb(232, 240, 254)",
      fontSize: "14.875px",
    });
    // social_buttons_layout: top puts the email-code button above the form, in the reading order too.
    const [button, field] = [await page.getByRole("link", { name: "Continue with email code" }).boundingBox(), await page.getByLabel("Email address").boundingBox()];
    expect(button && field && button.y < field.y).toBe(true);
    expect(await page.evaluate(() => {
      const link = document.querySelector(".alt-logins a") as Element;
      return Boolean(link.compareDocumentPosition(document.querySelector("form") as Element) & Node.DOCUMENT_POSITION_FOLLOWING);
    })).toBe(true);
    await screenshot(page, "branding-themed-login.png");
    const result = await axeResults(page);
    const found = result.violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.map((n) => n.target.join(" ")).join("\n    ")}`);
    expect(found).toEqual([]);
    expect(result.passes.length).toBeGreaterThan(10);

    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    const arrived = callbacks.next("/callback");
    await page.getByRole("button", { name: "Continue" }).click();
    const callback = await arrived;
    expect(callback.searchParams.get("code")).toBeTruthy();

    // Deleting both gives the plain page back.
    await admin.branding.templates.deleteUniversalLogin();
    await admin.branding.themes.delete(created.themeId);
    await expect(admin.branding.themes.getDefault()).rejects.toMatchObject({ statusCode: 404 });
    const { page: plain } = await context("plain-login");
    await plain.goto(authorizeUrl({ prompt: "login" }));
    await plain.getByRole("heading", { name: "Welcome" }).waitFor();
    expect(await plain.locator("#acme-header").count()).toBe(0);
  });
});
