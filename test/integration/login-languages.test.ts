import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant } from "../helpers/api";
import { pendingLogin, seedClient, type TestClient } from "../helpers/flows";
import { expectRefusals, reachKit } from "../helpers/route-reach";
import { api } from "../helpers/users";

/**
 * Issue 29 point 3: the login pages in the user's language (ui_locales, then Accept-Language against the
 * tenant's enabled_locales, then the tenant's default), <html lang dir>, and the prompts management API
 * (settings, custom text, partials) in the reference platform's shapes.
 */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await named(tenant, await seedClient(tenant, { callbacks: [CALLBACK] }), "Acme Notes");
});

/** Gives a seeded application a display name (the pages show it). */
async function named(t: string, c: TestClient, name: string): Promise<TestClient> {
  const res = await api(t, "PATCH", `/clients/${c.client_id}`, { name });
  expect(res.status).toBe(200);
  return c;
}

async function loginPage(t: string, c: TestClient, request: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const login = await pendingLogin(t, c.client_id, { redirect_uri: CALLBACK, ...request });
  const res = await call(`/u2/login?state=${login.state}`, { host: `${t}.localhost:8787`, headers });
  expect(res.status).toBe(200);
  return { html: await res.text(), login };
}

const htmlTag = (html: string) => /<html[^>]*>/.exec(html)?.[0];

describe("the language of the login pages", () => {
  it("ui_locales=fr renders French, whatever the browser prefers, on every page of the transaction", async () => {
    const { html, login } = await loginPage(tenant, client, { ui_locales: "fr-CA fr" }, { "accept-language": "de" });
    expect(htmlTag(html)).toBe('<html lang="fr" dir="ltr">');
    expect(html).toContain("<title>Connexion | Acme Notes</title>");
    expect(html).toContain("Connectez-vous pour continuer vers Acme Notes.");
    expect(html).toContain('<label for="email">Adresse e-mail</label>');
    expect(html).toContain("Inscrivez-vous");
    // A later page of the same login (sign-up) stays French: the transaction carries ui_locales.
    const signup = await (await call(`/u2/signup?state=${login.state}`, { host, headers: { "accept-language": "de" } })).text();
    expect(htmlTag(signup)).toBe('<html lang="fr" dir="ltr">');
    expect(signup).toContain("Créez votre compte");
  });

  it("CONNECTION_NOT_FOUND says what is true (issue 29 point 3): no connection at all, or connection= naming one not offered, in the page's language", async () => {
    const page = async (c: TestClient, request: Record<string, string>, language: string) => {
      const login = await pendingLogin(tenant, c.client_id, { redirect_uri: CALLBACK, ...request });
      const res = await call(`/u2/login?state=${login.state}`, { host, headers: { "accept-language": language } });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain('data-error-code="CONNECTION_NOT_FOUND"');
      return html;
    };
    const none = await named(tenant, await seedClient(tenant, { callbacks: [CALLBACK] }), "No Way In");
    expect((await api(tenant, "PATCH", `/clients/${none.client_id}/connections`, [])).status).toBe(200);
    expect(await page(none, {}, "en")).toContain("This application has no way to log in enabled.");
    expect(await page(none, {}, "fr")).toContain("Aucun moyen de connexion n’est activé pour cette application.");
    // The application has a password login, but connection= names another (unknown) one: not shown the form.
    for (const [language, text] of [["en", "This application does not offer this way of logging in."], ["de", "Diese Anwendung bietet diese Anmeldeart nicht an."]]) {
      const html = await page(client, { connection: "No-Such-Connection" }, language as string);
      expect(html).toContain(text);
      expect(html).not.toContain('name="password"');
      expect(html).not.toContain("email and password");
    }
  });

  it("Accept-Language picks by q-value; German strings and a German failure message", async () => {
    const { html, login } = await loginPage(tenant, client, {}, { "accept-language": "it;q=1, fr;q=0.4, de;q=0.8" });
    expect(htmlTag(html)).toBe('<html lang="de" dir="ltr">');
    expect(html).toContain("<h1 id=\"page-title\">Willkommen</h1>");
    expect(html).toContain('<label for="password">Passwort</label>');
    expect(html).toContain("Sie haben noch kein Konto?");
    const res = await call(`/u2/login?state=${login.state}`, {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: login.cookie, "accept-language": "de" },
      body: new URLSearchParams({ _csrf: login.csrf, email: "", password: "" }).toString(),
    });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('data-error-code="MISSING_CREDENTIALS"');
    expect(page).toContain("Geben Sie Ihre E-Mail-Adresse und Ihr Passwort ein.");
  });

  it("Arabic is right to left", async () => {
    const { html } = await loginPage(tenant, client, { ui_locales: "ar" });
    expect(htmlTag(html)).toBe('<html lang="ar" dir="rtl">');
    expect(html).toContain("مرحبًا بك");
  });

  it("without a match: the tenant's first enabled locale; enabled_locales limits and orders the choice", async () => {
    const t = await createTenant();
    const c = await seedClient(t, { callbacks: [CALLBACK] });
    expect(htmlTag((await loginPage(t, c, {}, { "accept-language": "it" })).html)).toBe('<html lang="en" dir="ltr">');
    const patched = await api(t, "PATCH", "/tenants/settings", { enabled_locales: ["es", "pt-BR", "en"] });
    expect(patched.status).toBe(200);
    expect(htmlTag((await loginPage(t, c, {}, { "accept-language": "it" })).html)).toBe('<html lang="es" dir="ltr">');
    const pt = await loginPage(t, c, {}, { "accept-language": "pt;q=0.9, de" });
    expect(htmlTag(pt.html)).toBe('<html lang="pt-BR" dir="ltr">');
    expect(pt.html).toContain("Boas-vindas");
    // ui_locales names a language the tenant does not offer: the browser's choice among the offered ones.
    expect(htmlTag((await loginPage(t, c, { ui_locales: "de" }, { "accept-language": "en" })).html)).toBe('<html lang="en" dir="ltr">');
  });

  it("PATCH /tenants/settings refuses unknown locale codes with a 400, storing nothing", async () => {
    const t = await createTenant();
    for (const enabled_locales of [["en", "xx"], ["klingon"], ["EN"], [42]]) {
      const res = await api(t, "PATCH", "/tenants/settings", { enabled_locales });
      expect(res.status, JSON.stringify(enabled_locales)).toBe(400);
    }
    const settings = (await (await api(t, "GET", "/tenants/settings")).json()) as { enabled_locales: string[] };
    expect(settings.enabled_locales).toEqual(["en"]);
  });

  it("the HTML error page follows Accept-Language", async () => {
    const res = await call(`/authorize?client_id=${client.client_id}&redirect_uri=https://evil.example/cb&response_type=code`, {
      host,
      headers: { accept: "text/html", "accept-language": "fr" },
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(htmlTag(html)).toBe('<html lang="fr" dir="ltr">');
    expect(html).toContain("Une erreur s’est produite");
    expect(html).toContain("Identifiant de suivi");
  });
});

describe("custom text and partials", () => {
  it("custom text set through the API shows on the page, escaped, in its language only", async () => {
    const t = await createTenant();
    const c = await named(t, await seedClient(t, { callbacks: [CALLBACK] }), "Acme");
    const body = { login: { title: "Bonjour <b>${clientName}</b> & co", buttonText: "Entrer" } };
    const put = await api(t, "PUT", "/prompts/login/custom-text/fr", body);
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual(body);
    expect(await (await api(t, "GET", "/prompts/login/custom-text/fr")).json()).toEqual(body);
    expect(await (await api(t, "GET", "/prompts/login/custom-text/de")).json()).toEqual({});
    const fr = (await loginPage(t, c, { ui_locales: "fr" })).html;
    expect(fr).toContain('<h1 id="page-title">Bonjour &lt;b&gt;Acme&lt;/b&gt; &amp; co</h1>');
    expect(fr).not.toContain("<b>Acme</b>");
    expect(fr).toContain('<button type="submit">Entrer</button>');
    expect(fr).toContain("Connectez-vous pour continuer vers Acme.");
    const de = (await loginPage(t, c, { ui_locales: "de" })).html;
    expect(de).toContain('<h1 id="page-title">Willkommen</h1>');
    // {} clears the language's texts.
    expect((await api(t, "PUT", "/prompts/login/custom-text/fr", {})).status).toBe(200);
    expect((await loginPage(t, c, { ui_locales: "fr" })).html).toContain('<h1 id="page-title">Bienvenue</h1>');
  });

  it("refuses unknown prompts, languages, screens and text ids, wrong types and oversized bodies with a 400 (nothing stored)", async () => {
    const t = await createTenant();
    const cases: [string, unknown, string, RegExp][] = [
      ["/prompts/nope/custom-text/en", { login: { title: "x" } }, "invalid_uri", /on property prompt/],
      ["/prompts/login/custom-text/xx", { login: { title: "x" } }, "invalid_uri", /on property language/],
      ["/prompts/login/custom-text/en", { "no-such-screen": { title: "x" } }, "invalid_body", /Additional properties not allowed: no-such-screen/],
      ["/prompts/login/custom-text/en", { login: { noSuchText: "x" } }, "invalid_body", /Additional properties not allowed: noSuchText/],
      ["/prompts/login/custom-text/en", { login: { title: 42 } }, "invalid_body", /Expected type string but found type number/],
      ["/prompts/login/custom-text/en", { login: "title" }, "invalid_body", /Expected type object/],
      ["/prompts/login/custom-text/en", ["login"], "invalid_body", /Expected type object but found type array/],
      ["/prompts/login/custom-text/en", { login: { title: "x".repeat(5001) } }, "invalid_body", /too long/],
      ["/prompts/login/partials", { login: { "no-such-point": "x" } }, "invalid_body", /no-such-point/],
      ["/prompts/consent/partials", { consent: { "form-content-start": "x" } }, "invalid_body", /consent/],
    ];
    for (const [path, body, errorCode, message] of cases) {
      const res = await api(t, "PUT", path, body);
      expect(res.status, path).toBe(400);
      const error = (await res.json()) as { statusCode: number; error: string; message: string; errorCode: string };
      expect(error, path).toMatchObject({ statusCode: 400, error: "Bad Request", errorCode });
      expect(error.message, path).toMatch(message);
    }
    expect((await api(t, "GET", "/prompts/nope/custom-text/en")).status).toBe(400);
    expect((await api(t, "GET", "/prompts/login/custom-text/zz")).status).toBe(400);
    const huge = { login: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`t${i}`, "x".repeat(5000)])) };
    expect((await api(t, "PUT", "/prompts/login/custom-text/en", huge)).status).toBe(413);
    expect(await (await api(t, "GET", "/prompts/login/custom-text/en")).json()).toEqual({});
    // A reference prompt Gatehouse has no screens for reads {} (deploy tools read every prompt).
    expect(await (await api(t, "GET", "/prompts/login-id/custom-text/en")).json()).toEqual({});
  });

  it("GET|PATCH /prompts in the reference shape; partials stored and read back", async () => {
    const t = await createTenant();
    expect(await (await api(t, "GET", "/prompts")).json()).toEqual({ universal_login_experience: "new", identifier_first: false, webauthn_platform_first_factor: false });
    const patched = await api(t, "PATCH", "/prompts", { identifier_first: true });
    expect(await patched.json()).toEqual({ universal_login_experience: "new", identifier_first: true, webauthn_platform_first_factor: false });
    expect((await api(t, "PATCH", "/prompts", { universal_login_experience: "old" })).status).toBe(400);
    expect((await api(t, "PATCH", "/prompts", { identifier_first: "yes" })).status).toBe(400);
    expect((await api(t, "PATCH", "/prompts", {})).status).toBe(400);
    const partials = { login: { "form-content-start": "<em>Hi</em>" } };
    expect(await (await api(t, "PUT", "/prompts/login/partials", partials)).json()).toEqual(partials);
    expect(await (await api(t, "GET", "/prompts/login/partials")).json()).toEqual(partials);
    expect(await (await api(t, "GET", "/prompts/signup/partials")).json()).toEqual({});
    // Rendered at its insertion point, as text.
    const c = await seedClient(t, { callbacks: [CALLBACK] });
    const html = (await loginPage(t, c)).html;
    expect(html).toContain('<p class="hint" data-insertion-point="form-content-start">&lt;em&gt;Hi&lt;/em&gt;</p>');
    expect(html).not.toContain("<em>Hi</em>");
  });

  it("needs read:prompts or update:prompts: no token 401; end user, other tenant, revoked token and a missing scope 403", async () => {
    const kit = await reachKit(["read:prompts", "update:prompts"]);
    await expectRefusals(kit, "GET", "/prompts", "read:prompts");
    await expectRefusals(kit, "PATCH", "/prompts", "update:prompts", { identifier_first: false });
    await expectRefusals(kit, "GET", "/prompts/login/custom-text/en", "read:prompts");
    await expectRefusals(kit, "PUT", "/prompts/login/custom-text/en", "update:prompts", { login: { title: "Hi" } });
    await expectRefusals(kit, "GET", "/prompts/login/partials", "read:prompts");
    await expectRefusals(kit, "PUT", "/prompts/login/partials", "update:prompts", {});
    const as = (method: string, path: string, b?: unknown) => api(kit.tenant, method, path, b, kit.allowed);
    expect((await as("GET", "/prompts")).status).toBe(200);
    expect((await as("PUT", "/prompts/login/custom-text/en", { login: { title: "Hi" } })).status).toBe(200);
    const reader = await reachKit(["read:prompts"], kit.tenant);
    expect((await api(kit.tenant, "PUT", "/prompts/login/custom-text/en", {}, reader.allowed)).status).toBe(403);
    expect((await api(kit.tenant, "GET", "/prompts/login/custom-text/en", undefined, reader.allowed)).status).toBe(200);
  });
});
