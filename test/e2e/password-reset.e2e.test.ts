import { randomBytes } from "node:crypto";
import { ManagementClient } from "auth0";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";
import { type CallbackServer, launchChromium, newRecordedContext, screenshot, startCallbackServer } from "./helpers/browser";

/**
 * Issue 29 point 1 end to end against `wrangler dev`: headless Chromium follows the login page's
 * "Forgot password?" link, reads the reset email from the development sink, sets a new password and logs in
 * with it (the old one refused); the reference platform's SDK (`auth0` 7) makes a password-change ticket that
 * Chromium then uses. The reset pages' axe-core scan is in accessibility.e2e.test.ts.
 */

const random = () => randomBytes(6).toString("hex");
const DB = "Username-Password-Authentication";

describe("password reset through headless Chromium and the auth0 SDK", () => {
  let server: RunningServer;
  let callbacks: CallbackServer;
  let browser: Browser;
  let admin: ManagementClient;
  let app: { client_id: string };
  const user = { email: `reset-${random()}@example.com`, password: `Old-Horse-${random()}`, id: "" };

  beforeAll(async () => {
    // The shared server has the development sink; this file changes nothing another file reads (its own app and user).
    server = await startServer({ shareable: true });
    callbacks = await startCallbackServer();
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const created = await admin.clients.create({ name: "Reset App", app_type: "regular_web", callbacks: [`${callbacks.origin}/callback`], grant_types: ["authorization_code"], token_endpoint_auth_method: "client_secret_post" });
    app = { client_id: String(created.client_id) };
    user.id = String((await admin.users.create({ connection: DB, email: user.email, password: user.password, email_verified: true })).user_id);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await callbacks?.close();
    await server?.stop();
  }, 60_000);

  const authorizeUrl = () =>
    `${server.baseUrl}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: `${callbacks.origin}/callback`, response_type: "code", scope: "openid email", state: random() })}`;

  /** The reset link of the newest email to the user, once the relay delivered it to the development sink. */
  async function linkFromSink(): Promise<string> {
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${server.baseUrl}/__dev/messages?to=${encodeURIComponent(user.email)}`);
      const { messages } = (await res.json()) as { messages: { body: string; subject: string | null }[] };
      const link = /https?:\/\/\S+\/u2\/reset-password\/change\?\S+/.exec(messages.find((m) => m.subject === "Reset your password")?.body ?? "")?.[0];
      if (link) return link;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error("no reset email reached the development sink");
  }

  async function setNewPassword(page: Page, password: string) {
    await page.getByLabel("New password", { exact: true }).fill(password);
    await page.getByLabel("Confirm new password").fill(password);
    await page.getByRole("button", { name: "Reset password" }).click();
  }

  async function logIn(page: Page, password: string) {
    await page.getByLabel("Email address").fill(user.email);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByRole("button", { name: "Continue" }).click();
  }

  it("Forgot password? → the emailed link → a new password → the old one refused, the new one logs in", async () => {
    const { context, page } = await newRecordedContext(browser);
    try {
      await page.goto(authorizeUrl());
      await page.getByRole("link", { name: "Forgot password?" }).click();
      await page.getByRole("heading", { name: "Forgot your password?" }).waitFor();
      await screenshot(page, "reset-request.png");
      await page.getByLabel("Email address").fill(user.email);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByRole("heading", { name: "Check your email" }).waitFor();
      await screenshot(page, "reset-check-email.png");

      await page.goto(await linkFromSink());
      await page.getByRole("heading", { name: "Change your password" }).waitFor();
      await setNewPassword(page, "short");
      await expect(page.getByRole("alert").textContent()).resolves.toContain("Password must be at least 8 characters long.");
      await screenshot(page, "reset-new-password-error.png");
      const fresh = `New-Horse-${random()}`;
      await setNewPassword(page, fresh);
      await page.getByRole("heading", { name: "Password changed" }).waitFor();
      await screenshot(page, "reset-done.png");

      // Back to the login the link started from: the old password is refused, the new one logs in.
      await page.getByRole("link", { name: "Back to Reset App" }).click();
      await logIn(page, user.password);
      await expect(page.getByRole("alert").textContent()).resolves.toContain("Wrong email or password.");
      const arrived = callbacks.next("/callback");
      await logIn(page, fresh);
      expect((await arrived).searchParams.get("code")).toBeTruthy();
      user.password = fresh;
    } finally {
      await context.close();
    }
  }, 90_000);

  it("a password-change ticket made with the auth0 SDK sets the password the next login uses", async () => {
    const { ticket } = await admin.tickets.changePassword({ user_id: user.id, ttl_sec: 600 });
    expect(ticket).toMatch(/\/u2\/reset-password\/change\?ticket=/);
    const { context, page } = await newRecordedContext(browser);
    try {
      await page.goto(String(ticket));
      const fresh = `Ticket-Horse-${random()}`;
      await setNewPassword(page, fresh);
      await page.getByRole("heading", { name: "Password changed" }).waitFor();
      await page.goto(authorizeUrl());
      await logIn(page, user.password);
      await expect(page.getByRole("alert").textContent()).resolves.toContain("Wrong email or password.");
      const arrived = callbacks.next("/callback");
      await logIn(page, fresh);
      expect((await arrived).searchParams.get("code")).toBeTruthy();
      // The ticket is spent.
      await page.goto(String(ticket));
      await page.getByRole("heading", { name: "Link expired" }).waitFor();
    } finally {
      await context.close();
    }
  }, 90_000);
});
