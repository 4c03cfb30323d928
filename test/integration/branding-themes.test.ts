import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, controlPlaneToken, createTenant } from "../helpers/api";
import { pendingLogin, seedClient } from "../helpers/flows";
import { expectRefusals, reachKit } from "../helpers/route-reach";
import { THEME } from "../helpers/theme";
import { api } from "../helpers/users";

/**
 * Issue 29 point 5: `/api/v2/branding/themes` and `/api/v2/branding/templates/universal-login` in the
 * reference platform's shapes, and both applied to the login pages: the theme as checked CSS values, the
 * page template (Liquid, sandboxed) around the page's card. Bad input is a 400; nothing a theme or a
 * template holds can add a script or escape the style sheet.
 */


const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;
type Theme = typeof THEME & { themeId: string };

async function loginPage(tenant: string, clientId: string): Promise<Response> {
  const login = await pendingLogin(tenant, clientId);
  return call(`/u2/login?state=${login.state}`, { host: `${tenant}.localhost:8787` });
}

const TEMPLATE = `<!DOCTYPE html><html lang="{{ locale }}"><head>{%- auth0:head -%}</head>
<body class="_widget-auto-layout"><header id="acme-header">Acme for {{ application.name }} ({{ prompt.name }})</header>
{%- auth0:widget -%}<footer id="acme-footer">Tenant {{ tenant.friendly_name }}</footer></body></html>`;

describe("branding themes", () => {
  it("create (200 with themeId), a second create 409, default and by id, PATCH the whole theme, DELETE", async () => {
    const t = await createTenant();
    const none = await api(t, "GET", "/branding/themes/default");
    expect(none.status).toBe(404);
    expect(await json(none)).toMatchObject({ statusCode: 404, errorCode: "theme_not_found" });

    const created = await api(t, "POST", "/branding/themes", THEME);
    expect(created.status).toBe(200);
    const theme = await json<Theme>(created);
    expect(theme).toEqual({ ...THEME, themeId: expect.stringMatching(/^[a-z0-9_-]{10,}$/) });
    const again = await api(t, "POST", "/branding/themes", THEME);
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ statusCode: 409, error: "Conflict" });

    expect(await json(await api(t, "GET", "/branding/themes/default"))).toEqual(theme);
    expect(await json(await api(t, "GET", `/branding/themes/${theme.themeId}`))).toEqual(theme);
    expect((await api(t, "GET", "/branding/themes/someotherid")).status).toBe(404);

    const changed = { ...THEME, displayName: undefined, colors: { ...THEME.colors, primary_button: "#004400", base_focus_color: "#000000" } };
    const patched = await api(t, "PATCH", `/branding/themes/${theme.themeId}`, changed);
    expect(patched.status).toBe(200);
    expect(await json(patched)).toEqual({ ...changed, displayName: "", themeId: theme.themeId });
    expect((await api(t, "PATCH", "/branding/themes/someotherid", THEME)).status).toBe(404);

    expect((await api(t, "DELETE", "/branding/themes/someotherid")).status).toBe(404);
    expect((await api(t, "DELETE", `/branding/themes/${theme.themeId}`)).status).toBe(204);
    expect((await api(t, "GET", "/branding/themes/default")).status).toBe(404);
    expect((await api(t, "POST", "/branding/themes", THEME)).status).toBe(200);
  });

  it("refuses missing groups, bad colours, enums, ranges, non-https URLs and markup, storing nothing", async () => {
    const t = await createTenant();
    const { borders: _b, ...noBorders } = THEME;
    const bad: unknown[] = [
      noBorders,
      { ...THEME, colors: { ...THEME.colors, primary_button: "red" } },
      { ...THEME, colors: { ...THEME.colors, header: "#fff;}</style><script>alert(1)</script>" } },
      { ...THEME, colors: { ...THEME.colors, body_text: undefined } },
      { ...THEME, colors: { ...THEME.colors, accent: "#ffffff" } },
      { ...THEME, widget: { ...THEME.widget, logo_position: "top" } },
      { ...THEME, widget: { ...THEME.widget, social_buttons_layout: "middle" } },
      { ...THEME, widget: { ...THEME.widget, header_text_alignment: "justify" } },
      { ...THEME, widget: { ...THEME.widget, logo_height: 101 } },
      { ...THEME, widget: { ...THEME.widget, logo_url: "javascript:alert(1)" } },
      { ...THEME, widget: { ...THEME.widget, logo_url: "http://cdn.example.com/a.png" } },
      { ...THEME, borders: { ...THEME.borders, widget_corner_radius: 51 } },
      { ...THEME, borders: { ...THEME.borders, input_border_weight: 4 } },
      { ...THEME, borders: { ...THEME.borders, buttons_style: "round" } },
      { ...THEME, fonts: { ...THEME.fonts, reference_text_size: 30 } },
      { ...THEME, fonts: { ...THEME.fonts, links_style: "bold" } },
      { ...THEME, fonts: { ...THEME.fonts, title: { bold: true, size: "150%" } } },
      { ...THEME, page_background: { ...THEME.page_background, background_color: "url(x)" } },
      { ...THEME, page_background: { ...THEME.page_background, page_layout: "top" } },
      { ...THEME, displayName: "<b>x</b>" },
    ];
    for (const body of bad) {
      const res = await api(t, "POST", "/branding/themes", body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(await json(res)).toMatchObject({ statusCode: 400, error: "Bad Request" });
    }
    expect((await api(t, "GET", "/branding/themes/default")).status).toBe(404);
  });

  it("is applied to the login page: checked CSS values, the theme's logo, the font's origin in the CSP", async () => {
    const t = await createTenant();
    const client = await seedClient(t);
    const plain = await (await loginPage(t, client.client_id)).text();
    expect(plain).not.toContain("--gh-widget-radius:20px");
    // A URL with quotes and brackets is stored (a valid URL) but percent-encoded in the page's CSS.
    const font_url = 'https://fonts.example.com/a.woff2?x=");}</style><script>alert(1)</script>';
    expect((await api(t, "POST", "/branding/themes", { ...THEME, fonts: { ...THEME.fonts, font_url } })).status).toBe(200);
    const res = await loginPage(t, client.client_id);
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const value of [
      "--gh-primary:#7a1fa2",
      "--gh-on-primary:#ffffff",
      "--gh-header:#123456",
      "--gh-link:#0b5394",
      "--gh-widget-bg:#fffdf5",
      "--gh-widget-radius:20px",
      "--gh-widget-border-w:2px",
      "--gh-widget-shadow:none",
      "--gh-button-radius:4px",
      "--gh-font-size:17px",
      "--gh-title-size:1.5",
      "--gh-title-weight:700",
      "--gh-page-bg:#e8f0fe",
      "--gh-page-align:flex-start",
      "--gh-header-align:left",
      "--gh-logo-height:60px",
      ".logo{margin-left:0;margin-right:auto}",
    ]) {
      expect(html, value).toContain(value);
    }
    expect(html).toContain('<img class="logo" src="https://cdn.example.com/acme.png"');
    expect(html).not.toContain("<script>");
    expect(html).not.toContain('");}');
    expect(html).toMatch(/url\("https:\/\/fonts\.example\.com\/a\.woff2\?x=%22%29;%7D%3C\/style%3E/);
    expect(res.headers.get("content-security-policy")).toContain("font-src https://fonts.example.com;");
    expect(res.headers.get("content-security-policy")).toContain("style-src 'nonce-");
  });

  it("social_buttons_layout puts the other ways in below the form (bottom) or above it (top), in the markup's order", async () => {
    const t = await createTenant();
    const client = await seedClient(t);
    const email = await api(t, "POST", "/connections", { name: "email", strategy: "email" });
    expect(email.status).toBe(201);
    const [db] = (await (await api(t, "GET", "/connections?name=Username-Password-Authentication")).json()) as { id: string }[];
    const connections = [db?.id, ((await email.json()) as { id: string }).id];
    expect((await api(t, "PATCH", `/clients/${client.client_id}/connections`, connections)).status).toBe(200);
    const order = async () => {
      const html = await (await loginPage(t, client.client_id)).text();
      const [others, form, button] = ['<div class="alt-logins">', '<form method="post"', "/u2/passwordless?state="].map((x) => html.indexOf(x)) as [number, number, number];
      expect(others).toBeGreaterThan(0);
      expect(form).toBeGreaterThan(0);
      expect(button).toBeGreaterThan(others);
      return others < form ? "top" : "bottom";
    };
    expect(await order()).toBe("bottom");
    expect((await api(t, "POST", "/branding/themes", THEME)).status).toBe(200);
    expect(await order()).toBe("bottom");
    const [theme] = [((await (await api(t, "GET", "/branding/themes/default")).json()) as { themeId: string }).themeId];
    const top = await api(t, "PATCH", `/branding/themes/${theme}`, { ...THEME, widget: { ...THEME.widget, social_buttons_layout: "top" } });
    expect(top.status).toBe(200);
    expect(await order()).toBe("top");
  });

  it("a stored theme holding unchecked values (an older writer) still reaches the page only as checked values", async () => {
    const t = await createTenant();
    const client = await seedClient(t);
    const hostile = {
      ...THEME,
      themeId: "old",
      colors: { ...THEME.colors, primary_button: "red;}</style><script>alert(1)</script>" },
      borders: { ...THEME.borders, widget_corner_radius: "9px;background:url(https://evil.example/x)" },
      widget: { ...THEME.widget, logo_url: "javascript:alert(1)", logo_position: "expression(alert(1))" },
    };
    await runInDurableObject(env.TENANT.getByName(t), (_o, state) => {
      state.storage.sql.exec("INSERT INTO _settings (key, value) VALUES ('branding_theme', ?)", JSON.stringify(hostile));
      state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
    });
    const html = await (await loginPage(t, client.client_id)).text();
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("evil.example");
    expect(html).not.toContain("javascript:");
    expect(html).not.toContain("expression(");
    expect(html).toContain("--gh-header:#123456");
  });
});

describe("universal-login page template", () => {
  const put = async (t: string, body: string, type = "application/json") =>
    call("/api/v2/branding/templates/universal-login", {
      method: "PUT",
      headers: { authorization: `Bearer ${await controlPlaneToken()}`, "tenant-id": t, "content-type": type },
      body,
    });

  it("PUT (201 then 200; {template}, a JSON string or text/html), GET {body}, DELETE, then 404 again", async () => {
    const t = await createTenant();
    const none = await api(t, "GET", "/branding/templates/universal-login");
    expect(none.status).toBe(404);
    expect(await json(none)).toMatchObject({ statusCode: 404, message: "Template does not exist." });
    expect((await put(t, JSON.stringify({ template: TEMPLATE }))).status).toBe(201);
    expect(await json(await api(t, "GET", "/branding/templates/universal-login"))).toEqual({ body: TEMPLATE });
    const asString = TEMPLATE.replace("Acme", "Acme Corp");
    expect((await put(t, JSON.stringify(asString))).status).toBe(200);
    expect(await json(await api(t, "GET", "/branding/templates/universal-login"))).toEqual({ body: asString });
    expect((await put(t, TEMPLATE, "text/html; charset=utf-8")).status).toBe(200);
    expect(await json(await api(t, "GET", "/branding/templates/universal-login"))).toEqual({ body: TEMPLATE });
    expect((await api(t, "DELETE", "/branding/templates/universal-login")).status).toBe(204);
    expect((await api(t, "GET", "/branding/templates/universal-login")).status).toBe(404);
  });

  it("refuses a template without the required tags, with file tags, syntax errors, loops or megabytes: 400, never 5xx", async () => {
    const t = await createTenant();
    const cases: [string, RegExp][] = [
      ["<html><head></head><body>{%- auth0:widget -%}</body></html>", /single auth0:head tag and at least one auth0:widget/],
      ["<html><head>{%- auth0:head -%}</head><body></body></html>", /single auth0:head tag/],
      ["{%- auth0:head -%}{%- auth0:head -%}{%- auth0:widget -%}", /single auth0:head tag/],
      ['{%- auth0:head -%}{%- auth0:widget -%}{% include "secrets" %}', /include tag is not available/],
      ['{%- auth0:head -%}{%- auth0:widget -%}{% render "x" %}', /render tag is not available/],
      ["{%- auth0:head -%}{%- auth0:widget -%}{% if %}", /template/i],
      ["{%- auth0:head -%}{%- auth0:widget -%}{% auth0:script %}", /template/i],
      ["{%- auth0:head -%}{%- auth0:widget -%}{% for i in (1..100000000) %}x{% endfor %}", /limits/],
      ['{%- auth0:head -%}{%- auth0:widget -%}{% assign s = "xxxxxxxxxxxxxxxx" %}{% for i in (1..20) %}{% assign s = s | append: s %}{% endfor %}{{ s }}', /limits/],
    ];
    for (const [template, message] of cases) {
      const res = await put(t, JSON.stringify({ template }));
      expect(res.status, template).toBe(400);
      expect((await json<{ message: string }>(res)).message, template).toMatch(message);
    }
    expect((await put(t, JSON.stringify({ template: 42 }))).status).toBe(400);
    expect((await put(t, JSON.stringify({ template: "" }))).status).toBe(400);
    expect((await put(t, "{not json")).status).toBe(400);
    expect((await put(t, TEMPLATE, "application/x-www-form-urlencoded")).status).toBe(415);
    expect((await api(t, "GET", "/branding/templates/universal-login")).status).toBe(404);
  });

  it("wraps every login page: the template's markup, escaped variables, the page's head and card inside", async () => {
    const t = await createTenant();
    const client = await seedClient(t);
    await api(t, "PATCH", `/clients/${client.client_id}`, { name: "<img src=x onerror=alert(1)>" });
    expect((await api(t, "POST", "/branding/themes", THEME)).status).toBe(200);
    expect((await put(t, JSON.stringify({ template: TEMPLATE }))).status).toBe(201);
    const res = await loginPage(t, client.client_id);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html.startsWith("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"")).toBe(true);
    expect(html).toContain('<header id="acme-header">Acme for &lt;img src=x onerror=alert(1)&gt; (login)</header>');
    expect(html).toContain(`<footer id="acme-footer">Tenant `);
    expect(html).not.toContain("<img src=x");
    // The head (the nonce-tagged sheet with the theme) and the card are the page's own.
    const nonce = /style-src 'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1];
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html).toContain("--gh-primary:#7a1fa2");
    expect(html).toMatch(/<main[^>]*>[\s\S]*name="password"[\s\S]*<\/main><footer id="acme-footer">/);
    expect(html).not.toContain("\u0000");
  });

  it("a template that goes over the bounds on one page only is cut there: the plain page, not a 5xx", async () => {
    const t = await createTenant();
    const client = await seedClient(t);
    await api(t, "PATCH", `/clients/${client.client_id}`, { name: "Loop App" });
    const template = `<html><head>{%- auth0:head -%}</head><body><p id="t">templated</p>{% if application.name == "Loop App" %}{% for i in (1..1000000) %}x{% endfor %}{% endif %}{%- auth0:widget -%}</body></html>`;
    expect((await put(t, JSON.stringify({ template }))).status).toBe(201);
    const res = await loginPage(t, client.client_id);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toContain('<p id="t">');
    expect(html).toContain('name="password"');
  });
});

describe("who can reach the branding theme and template routes", () => {
  it("no token, another scope, another tenant, an end user or a revoked token is refused on every route", async () => {
    const kit = await reachKit(["read:branding", "create:branding", "update:branding", "delete:branding"]);
    const routes: [string, string, string, unknown?][] = [
      ["POST", "/branding/themes", "create:branding", THEME],
      ["GET", "/branding/themes/default", "read:branding"],
      ["GET", "/branding/themes/abc", "read:branding"],
      ["PATCH", "/branding/themes/abc", "update:branding", THEME],
      ["DELETE", "/branding/themes/abc", "delete:branding"],
      ["GET", "/branding/templates/universal-login", "read:branding"],
      ["PUT", "/branding/templates/universal-login", "update:branding", { template: TEMPLATE }],
      ["DELETE", "/branding/templates/universal-login", "delete:branding"],
    ];
    for (const [method, path, scope, body] of routes) await expectRefusals(kit, method, path, scope, body);
    const created = await api(kit.tenant, "POST", "/branding/themes", THEME, kit.allowed);
    expect(created.status).toBe(200);
    const { themeId } = await json<Theme>(created);
    expect((await api(kit.tenant, "GET", `/branding/themes/${themeId}`, undefined, kit.allowed)).status).toBe(200);
    expect((await api(kit.tenant, "PUT", "/branding/templates/universal-login", { template: TEMPLATE }, kit.allowed)).status).toBe(201);
    expect((await api(kit.tenant, "GET", "/branding/templates/universal-login", undefined, kit.allowed)).status).toBe(200);
    expect((await api(kit.tenant, "DELETE", `/branding/themes/${themeId}`, undefined, kit.allowed)).status).toBe(204);
  });
});
