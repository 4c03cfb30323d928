import { expect } from "vitest";
import { TestBrowser } from "./mfa";

/** The seeded first admin of the test deployment (vitest.config.ts bindings). */
export const ADMIN = { email: "admin@example.com", password: "correct horse battery staple" };

/** The value of a named hidden field of a page (the console's `csrf`, the login page's `_csrf`). */
export const fieldOf = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? "";

/**
 * Logs an operator into the console the way a browser does: /admin → /admin/login → /authorize → /u2/login
 * (the password form) → /admin/callback → the page first asked for. Returns the browser (its cookie jar
 * holds the console session) and the final page's response.
 */
export async function consoleLogin(email: string, password: string, path = "/admin/tenants"): Promise<{ browser: TestBrowser; page: Response }> {
  const browser = new TestBrowser("localhost:8787");
  const first = await browser.get(path);
  expect(first.status).toBe(302);
  const login = await browser.follow(first);
  const authorize = await browser.follow(login);
  const form = await browser.follow(authorize);
  expect(form.status, (await form.clone().text()).slice(0, 500)).toBe(200);
  const html = await form.text();
  const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
  const posted = await browser.post(action, { _csrf: fieldOf(html, "_csrf"), email, password });
  const callback = await browser.follow(posted);
  const page = await browser.follow(callback);
  return { browser, page };
}
