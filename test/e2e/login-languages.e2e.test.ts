import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserSuite } from "./helpers/browser-suite";
import { axeResults, screenshot } from "./helpers/browser";

/**
 * Issue 29 point 3 in headless Chromium: `ui_locales=fr` and `Accept-Language: de` render French and German
 * login pages, Arabic renders right to left, a custom text set with the `auth0` SDK
 * (`prompts.customText.set`) shows on the page (escaped), and the login page passes axe-core in fr, de, ar.
 */

async function expectNoViolations(page: Page, name: string) {
  await screenshot(page, `i18n-${name}.png`);
  const result = await axeResults(page);
  const found = result.violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.map((n) => n.target.join(" ")).join("\n    ")}`);
  expect(found, `${name} at ${page.url()}`).toEqual([]);
  expect(result.passes.length).toBeGreaterThan(10);
}

describe("login pages in the user's language", () => {
  const suite = browserSuite("login-languages.e2e", "Carnet");
  const { context, authorizeUrl } = suite;
  let { admin } = suite;
  beforeAll(() => ({ admin } = suite));

  it("ui_locales=fr is French, Accept-Language: de is German, ar is right to left; axe finds nothing", { timeout: 180_000 }, async () => {
    const { page } = await context("languages");
    await page.goto(authorizeUrl({ ui_locales: "fr" }));
    await page.getByRole("heading", { name: "Bienvenue" }).waitFor();
    expect(await page.locator("html").getAttribute("lang")).toBe("fr");
    expect(await page.title()).toBe("Connexion | Carnet");
    await page.getByLabel("Adresse e-mail").fill("personne@example.com");
    await page.getByLabel("Mot de passe", { exact: true }).fill("mauvais-mot-de-passe");
    await page.getByRole("button", { name: "Continuer" }).click();
    await page.getByRole("alert").filter({ hasText: "Adresse e-mail ou mot de passe incorrect." }).waitFor();
    await expectNoViolations(page, "login-fr");

    // A browser set to German: its Accept-Language is de-DE,de;q=0.9.
    const germanContext = await suite.browser.newContext({ locale: "de-DE" });
    const german = { page: await germanContext.newPage() };
    await german.page.goto(authorizeUrl());
    await german.page.getByRole("heading", { name: "Willkommen" }).waitFor();
    expect(await german.page.locator("html").getAttribute("lang")).toBe("de");
    expect(await german.page.getByRole("link", { name: "Registrieren" }).count()).toBe(1);
    await expectNoViolations(german.page, "login-de");
    await germanContext.close();

    const arabic = await context("arabic");
    await arabic.page.goto(authorizeUrl({ ui_locales: "ar" }));
    await arabic.page.getByRole("heading", { name: "مرحبًا بك" }).waitFor();
    expect(await arabic.page.locator("html").getAttribute("dir")).toBe("rtl");
    await expectNoViolations(arabic.page, "login-ar");
  });

  it("a custom text set with the auth0 SDK shows on the page, as text", { timeout: 120_000 }, async () => {
    const texts = { login: { title: "Bonjour <i>${clientName}</i>", buttonText: "Entrer" } };
    await admin.prompts.customText.set("login", "fr", texts);
    expect(await admin.prompts.customText.get("login", "fr")).toEqual(texts);
    const { page } = await context("custom-text");
    await page.goto(authorizeUrl({ ui_locales: "fr" }));
    await page.getByRole("heading", { name: "Bonjour <i>Carnet</i>" }).waitFor();
    expect(await page.locator("h1 i").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Entrer" }).count()).toBe(1);
    // Other languages keep the catalogue's text.
    await page.goto(authorizeUrl({ ui_locales: "es" }));
    await page.getByRole("heading", { name: "Te damos la bienvenida" }).waitFor();
    await admin.prompts.customText.set("login", "fr", {});
  });
});
