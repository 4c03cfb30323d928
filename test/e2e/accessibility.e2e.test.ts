import { randomBytes } from "node:crypto";
import * as OTPAuth from "otpauth";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserSuite } from "./helpers/browser-suite";
import { axeResults, screenshot } from "./helpers/browser";

/**
 * Issue 29 point 7: every universal login page passes axe-core (`@axe-core/playwright`, all rules but the
 * experimental ones) in headless Chromium, and a keyboard alone completes a login. Each page is screenshot
 * (test-results/screenshots/a11y-*.png) before it is scanned.
 */

const random = () => randomBytes(6).toString("hex");
const PASSWORD = `Correct-Horse-${random()}`;
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** Scans the page; a violation fails with its rule, its help text and the offending nodes' selectors. */
async function expectNoViolations(page: Page, name: string) {
  await screenshot(page, `a11y-${name}.png`);
  const result = await axeResults(page);
  const found = result.violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.map((n) => n.target.join(" ")).join("\n    ")}`);
  expect(found, `${name} at ${page.url()}`).toEqual([]);
  // The scan ran real rules (a page that failed to load would pass vacuously).
  expect(result.passes.length).toBeGreaterThan(10);
}

const totp = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 }).generate();

describe("universal login pages pass axe-core in Chromium", () => {
  const suite = browserSuite("accessibility.e2e", "Accessible App");
  const { context, authorizeUrl } = suite;
  let { server, admin, callbacks, app } = suite;
  beforeAll(() => ({ server, admin, callbacks, app } = suite));

  async function signUp(email: string): Promise<string> {
    const user = await admin.users.create({ connection: "Username-Password-Authentication", email, password: PASSWORD, email_verified: true });
    return String(user.user_id);
  }

  async function logIn(page: Page, email: string, extra: Record<string, string> = {}) {
    await page.goto(authorizeUrl({ prompt: "login", ...extra }));
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Continue" }).click();
  }

  it("login (fresh and after a failed attempt), signup, an expired-link page and the error page", { timeout: 180_000 }, async () => {
    const { page } = await context("login");
    await page.goto(authorizeUrl());
    await page.getByRole("heading", { name: "Welcome" }).waitFor();
    await expectNoViolations(page, "login");
    await page.getByLabel("Email address").fill(`nobody-${random()}@example.com`);
    await page.getByLabel("Password", { exact: true }).fill("wrong-password");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("alert").waitFor();
    // The failure is announced and tied to the fields it concerns.
    expect(await page.getByLabel("Password", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("Password", { exact: true }).getAttribute("aria-describedby")).toContain("form-error");
    await expectNoViolations(page, "login-error");
    await page.getByRole("link", { name: "Sign up" }).click();
    await page.getByRole("heading", { name: "Create your account" }).waitFor();
    await expectNoViolations(page, "signup");
    await page.goto(`${server.baseUrl}/u2/login?state=not-a-login-session`);
    await expectNoViolations(page, "expired-login");
    // Issue 29 point 6: an unregistered redirect_uri is an HTML page with the error and a trace id.
    const bad = await page.goto(authorizeUrl({ redirect_uri: "http://127.0.0.1:9/not-registered" }));
    expect(bad?.status()).toBe(400);
    await page.getByRole("heading", { name: "Something went wrong" }).waitFor();
    expect(await page.locator("#error-code").innerText()).toBe("invalid_request");
    expect(await page.locator("#trace-id").innerText()).toMatch(/^[A-Za-z0-9_-]{12,}$/);
    await expectNoViolations(page, "error-page");
  });

  it("password reset: request, check your email, set a new password, done", { timeout: 180_000 }, async () => {
    const email = `reset-${random()}@example.com`;
    await signUp(email);
    const { page } = await context("reset");
    await page.goto(authorizeUrl());
    await page.getByRole("link", { name: "Forgot password?" }).click();
    await page.getByRole("heading", { name: "Forgot your password?" }).waitFor();
    await expectNoViolations(page, "reset-request");
    await page.getByLabel("Email address").fill(email);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "Check your email" }).waitFor();
    await expectNoViolations(page, "reset-check-email");
    let link: string | undefined;
    for (let i = 0; i < 50 && !link; i++) {
      const res = await fetch(`${server.baseUrl}/__dev/messages?to=${encodeURIComponent(email)}`);
      const { messages } = (await res.json()) as { messages: { body: string }[] };
      link = /https?:\/\/\S+\/u2\/reset-password\/change\?\S+/.exec(messages.map((m) => m.body).join("\n"))?.[0];
      if (!link) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(link).toBeTruthy();
    await page.goto(String(link));
    await page.getByLabel("New password", { exact: true }).waitFor();
    await expectNoViolations(page, "reset-set");
    await page.getByLabel("New password", { exact: true }).fill("short");
    await page.getByLabel("Confirm new password").fill("short");
    await page.getByRole("button", { name: "Reset password" }).click();
    await page.getByRole("alert").waitFor();
    await expectNoViolations(page, "reset-set-error");
    const next = `New-Battery-${random()}`;
    await page.getByLabel("New password", { exact: true }).fill(next);
    await page.getByLabel("Confirm new password").fill(next);
    await page.getByRole("button", { name: "Reset password" }).click();
    await page.getByRole("heading", { level: 1 }).waitFor();
    await expectNoViolations(page, "reset-done");
  });

  it("MFA: factor choice, TOTP enrollment, recovery codes, the challenge and its error", { timeout: 240_000 }, async () => {
    await admin.guardian.factors.set("otp", { enabled: true });
    await admin.guardian.factors.set("webauthn-roaming", { enabled: true });
    await admin.guardian.policies.set(["all-applications"]);
    try {
      const email = `mfa-${random()}@example.com`;
      await signUp(email);
      const { page } = await context("mfa");
      await logIn(page, email);
      await page.getByRole("heading", { name: "Secure your account" }).waitFor();
      await expectNoViolations(page, "mfa-factor-choice");
      await page.getByRole("link", { name: /Security key/ }).click();
      await page.getByRole("heading", { name: "Add a security key" }).waitFor();
      await expectNoViolations(page, "mfa-security-key");
      await page.goBack();
      await page.getByRole("link", { name: /Authenticator app/ }).click();
      await page.getByRole("img", { name: /QR code/ }).waitFor();
      await expectNoViolations(page, "mfa-totp-enrollment");
      const secret = (await page.locator("#totp-secret").innerText()).replace(/\s/g, "");
      await page.getByLabel("6-digit code").fill(totp(secret));
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByRole("heading", { name: "Save your recovery codes" }).waitFor();
      await expectNoViolations(page, "mfa-recovery-codes");
      const done = callbacks.next("/callback");
      await page.getByRole("button", { name: "I have saved my codes" }).click();
      await done;

      const second = await context("mfa-challenge");
      await logIn(second.page, email);
      await second.page.getByRole("heading", { name: "Verify it's you" }).waitFor();
      await expectNoViolations(second.page, "mfa-challenge");
      await second.page.getByLabel("6-digit code").fill("000000");
      await second.page.getByRole("button", { name: "Continue" }).click();
      await second.page.getByRole("alert").waitFor();
      await expectNoViolations(second.page, "mfa-challenge-error");
    } finally {
      await admin.guardian.policies.set([]);
      await admin.guardian.factors.set("webauthn-roaming", { enabled: false });
      await admin.guardian.factors.set("otp", { enabled: false });
    }
  });

  it("organization prompts: the name before login and the picker after it", { timeout: 180_000 }, async () => {
    const email = `org-${random()}@example.com`;
    const userId = await signUp(email);
    const connections = await admin.connections.list({ name: "Username-Password-Authentication" });
    const connectionId = String(connections.data[0]?.id);
    for (const label of ["Acme", "Globex"]) {
      const org = await admin.organizations.create({ name: `${label.toLowerCase()}-${random()}`, display_name: label });
      await admin.organizations.enabledConnections.add(String(org.id), { connection_id: connectionId, assign_membership_on_login: false });
      await admin.organizations.members.create(String(org.id), { members: [userId] });
    }
    const redirect = `${callbacks.origin}/callback`;
    for (const behavior of ["pre_login_prompt", "post_login_prompt"] as const) {
      const created = await admin.clients.create({
        name: `Org ${behavior}`,
        app_type: "regular_web",
        callbacks: [redirect],
        grant_types: ["authorization_code"],
        organization_usage: "require",
        organization_require_behavior: behavior,
      });
      const { page } = await context(behavior);
      const url = `${server.baseUrl}/authorize?${new URLSearchParams({ client_id: String(created.client_id), redirect_uri: redirect, response_type: "code", scope: "openid", state: "a11y" })}`;
      await page.goto(url);
      if (behavior === "pre_login_prompt") {
        await page.getByRole("heading", { name: "Enter your organization" }).waitFor();
        await expectNoViolations(page, "organization-name");
        await page.getByRole("button", { name: "Continue" }).click();
        await page.getByRole("alert").waitFor();
        await expectNoViolations(page, "organization-name-error");
      } else {
        await page.getByLabel("Email address").fill(email);
        await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
        await page.getByRole("button", { name: "Continue" }).click();
        await page.getByRole("heading", { name: "Choose your organization" }).waitFor();
        await expectNoViolations(page, "organization-picker");
      }
    }
  });

  it("device activation: the code form, its error and the confirmation", { timeout: 180_000 }, async () => {
    const tv = await admin.clients.create({ name: "A11y TV", app_type: "native", token_endpoint_auth_method: "none", grant_types: [DEVICE_GRANT] });
    const res = await fetch(`${server.baseUrl}/oauth/device/code`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: String(tv.client_id), scope: "openid" }),
    });
    expect(res.status).toBe(200);
    const started = (await res.json()) as { verification_uri: string; user_code: string };
    const { page } = await context("device");
    await page.goto(started.verification_uri);
    await expectNoViolations(page, "device-activate");
    await page.getByLabel("Code").fill("BBBB-BBBB");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("alert").waitFor();
    await expectNoViolations(page, "device-activate-error");
    await page.getByLabel("Code").fill(started.user_code);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("button", { name: "Confirm and log in" }).waitFor();
    await expectNoViolations(page, "device-confirm");
  });

  it("a keyboard alone logs in: Tab reaches each field and the button in order, Enter submits", async () => {
    const email = `keys-${random()}@example.com`;
    await signUp(email);
    const { page } = await context("keyboard");
    const callback = callbacks.next("/callback");
    await page.goto(authorizeUrl());
    // The email field has focus on arrival.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("email");
    await page.keyboard.type(email);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("password");
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Forgot password?");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Continue");
    await page.keyboard.press("Enter");
    const url = await callback;
    expect(url.searchParams.get("code")).toBeTruthy();
    expect(url.searchParams.get("state")).toBe("e2e");
    void app;
  });
});
