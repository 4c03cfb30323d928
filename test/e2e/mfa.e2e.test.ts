import { decodeJwt } from "jose";
import { Secret, TOTP } from "otpauth";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "./helpers/browser";
import { browserSuite } from "./helpers/browser-suite";

/**
 * Issue 12 end to end in headless Chromium against `wrangler dev`: TOTP enrollment from a ticket (codes computed
 * with otpauth from the key shown on the page), a login challenged for TOTP, forced enrollment at login, a
 * passkey created after a password login and then used alone with Chromium's virtual authenticator (DevTools
 * WebAuthn domain: resident key, user verification), and an SMS login whose code is read from the
 * development sink. Every new screen is saved under test-results/screenshots/mfa-*.png.
 */

const PASSWORD = `Correct-Horse-${Math.random().toString(36).slice(2, 8)}`;
const code = (secret: string, at = Date.now()) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: at });

describe("MFA, passkeys and SMS in Chromium", () => {
  const suite = browserSuite("mfa.e2e", "MFA App");
  const { context, authorizeUrl, exchange } = suite;
  // The suite's fields under their own names, once its beforeAll has set them.
  let { server, admin, callbacks, app } = suite;
  beforeAll(() => ({ server, admin, callbacks, app } = suite));

  async function signUp(email: string): Promise<string> {
    const res = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.client_id, email, password: PASSWORD, connection: "Username-Password-Authentication" }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  }

  /** Waits for the callback and redeems its code; answers the ID token's claims. */
  async function redeem(callback: Promise<URL>) {
    const res = await exchange(await callback);
    expect(res.status).toBe(200);
    return decodeJwt(((await res.json()) as { id_token: string }).id_token);
  }

  async function logIn(page: Page, email: string) {
    await page.goto(authorizeUrl({ prompt: "login" }));
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Continue" }).click();
  }

  /** Reads the TOTP key from the enrollment screen, types the app's code, saves the recovery codes. */
  async function enrollTotp(page: Page, shots: { enrollment: string; recovery?: string }) {
    await page.getByRole("heading", { name: "Secure your account" }).waitFor();
    await page.getByRole("img", { name: /QR code/ }).waitFor();
    await screenshot(page, shots.enrollment);
    const secret = (await page.locator("#totp-secret").innerText()).replace(/\s/g, "");
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.getByLabel("6-digit code").fill(code(secret));
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "Save your recovery codes" }).waitFor();
    expect(await page.locator("#recovery-codes li").count()).toBe(10);
    if (shots.recovery) await screenshot(page, shots.recovery);
    return secret;
  }

  let ticketUser: { email: string; secret: string };

  it("enrolls TOTP from an enrollment ticket (the key on the page drives otpauth)", async () => {
    await admin.guardian.factors.set("otp", { enabled: true });
    const email = `ticket-${Date.now()}@example.com`;
    const userId = await signUp(email);
    const ticket = await admin.guardian.enrollments.createTicket({ user_id: userId });
    const { page } = await context("ticket");
    await page.goto(String(ticket.ticket_url));
    const secret = await enrollTotp(page, { enrollment: "mfa-01-ticket-totp-enrollment.png", recovery: "mfa-02-recovery-codes.png" });
    await page.getByRole("button", { name: "I have saved my codes" }).click();
    await page.getByRole("heading", { name: "You're all set" }).waitFor();
    await screenshot(page, "mfa-03-enrollment-done.png");
    const methods = await admin.users.authenticationMethods.list(userId);
    expect(methods.data.map((m) => m.type)).toEqual(["totp", "recovery-code"]);
    // The ticket was single use.
    await page.goto(String(ticket.ticket_url));
    await page.getByText("This enrollment link was already used").waitFor();
    ticketUser = { email, secret };
  });

  it("challenges a login for TOTP under the all-applications policy; a wrong code is announced", async () => {
    await admin.guardian.policies.set(["all-applications"]);
    const { page } = await context("totp-challenge");
    const callback = callbacks.next("/callback");
    await logIn(page, ticketUser.email);
    await page.getByRole("heading", { name: "Verify it's you" }).waitFor();
    await screenshot(page, "mfa-04-totp-challenge.png");
    await page.getByLabel("6-digit code").fill("000000");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").innerText()).toContain("That code is not right");
    await screenshot(page, "mfa-05-totp-wrong-code.png");
    // The enrollment spent the current step's code: the device's next code is accepted (within about 30 s).
    await page.getByLabel("6-digit code").fill(code(ticketUser.secret, Date.now() + 30_000));
    await page.getByRole("button", { name: "Continue" }).click();
    const claims = await redeem(callback);
    expect(claims.amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("makes a user without a factor enroll during login (factor choice when several are on)", async () => {
    await admin.guardian.factors.set("webauthn-roaming", { enabled: true });
    const email = `forced-${Date.now()}@example.com`;
    await signUp(email);
    const { page } = await context("forced");
    const callback = callbacks.next("/callback");
    await logIn(page, email);
    await page.getByRole("heading", { name: "Secure your account" }).waitFor();
    await screenshot(page, "mfa-06-factor-choice.png");
    await page.getByRole("link", { name: /Security key/ }).click();
    await page.getByRole("heading", { name: "Add a security key" }).waitFor();
    await screenshot(page, "mfa-07-security-key-enrollment.png");
    await page.goBack();
    await page.getByRole("link", { name: /Authenticator app/ }).click();
    await enrollTotp(page, { enrollment: "mfa-08-forced-totp-enrollment.png" });
    await page.getByRole("button", { name: "I have saved my codes" }).click();
    const claims = await redeem(callback);
    expect(claims.amr).toContain("mfa");
    await admin.guardian.factors.set("webauthn-roaming", { enabled: false });
  });

  it("creates a passkey after a password login and then logs in with it alone (virtual authenticator)", async () => {
    await admin.guardian.policies.set([]);
    const connection = (await admin.connections.list({ name: "Username-Password-Authentication" })).data[0];
    const connectionId = String(connection?.id);
    const passkeyOptions = { authentication_methods: { passkey: { enabled: true }, password: { enabled: true } } };
    await admin.connections.update(connectionId, { options: { ...passkeyOptions, passkey_options: { challenge_ui: "both", progressive_enrollment_enabled: true } } });
    try {
      await passkeyJourney(connectionId, passkeyOptions);
    } finally {
      await admin.connections.update(connectionId, { options: {} });
    }
  });

  async function passkeyJourney(connectionId: string, passkeyOptions: Record<string, unknown>) {
    const email = `passkey-${Date.now()}@example.com`;
    const userId = await signUp(email);
    const { page, log } = await context("passkey");
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("WebAuthn.enable", { enableUI: false });
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", ctap2Version: "ctap2_1", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });

    const first = callbacks.next("/callback");
    await logIn(page, email);
    await page.getByRole("heading", { name: "Log in faster with a passkey" }).waitFor();
    await screenshot(page, "mfa-09-passkey-offer.png");
    await page.getByRole("button", { name: "Create a passkey" }).click();
    expect((await redeem(first)).amr).toEqual(["pwd"]);
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);
    const methods = await admin.users.authenticationMethods.list(userId);
    expect(methods.data.map((m) => m.type)).toEqual(["passkey"]);

    // What a person sees first (a browser without the passkey): the button and autofill on the email field.
    const { page: fresh } = await context("passkey-login-page");
    await fresh.goto(authorizeUrl({ prompt: "login" }));
    await fresh.getByRole("button", { name: "Sign in with a passkey" }).waitFor();
    expect(await fresh.getByLabel("Email address").getAttribute("autocomplete")).toBe("username webauthn");
    expect(await fresh.evaluate(() => PublicKeyCredential.isConditionalMediationAvailable())).toBe(true);
    await screenshot(fresh, "mfa-10-login-with-passkey.png");

    // Conditional UI: the virtual authenticator answers the autofill request with the only passkey at once.
    const second = callbacks.next("/callback");
    await page.goto(authorizeUrl({ prompt: "login" }));
    expect(await redeem(second)).toMatchObject({ sub: userId, amr: ["hwk", "user", "mfa"] });

    // With challenge_ui "button" there is no autofill: the button runs the (modal) ceremony.
    await admin.connections.update(connectionId, { options: { ...passkeyOptions, passkey_options: { challenge_ui: "button", progressive_enrollment_enabled: true } } });
    // The worker's configuration cache may serve the previous options for up to CONFIG_CACHE_TTL_MS: wait
    // (in the browser without a passkey) until the page renders without autofill, or the passkey page
    // would answer the autofill request on load.
    await expect
      .poll(
        async () => {
          await fresh.goto(authorizeUrl({ prompt: "login" }));
          return fresh.getByLabel("Email address").getAttribute("autocomplete");
        },
        { timeout: 15_000, intervals: [500] },
      )
      .toBe("username");
    const third = callbacks.next("/callback");
    await page.goto(authorizeUrl({ prompt: "login" }));
    expect(await page.getByLabel("Email address").getAttribute("autocomplete")).toBe("username");
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    expect(await redeem(third)).toMatchObject({ sub: userId, amr: ["hwk", "user", "mfa"] });
    expect(log.consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  }

  it("logs in with an SMS code read from the development sink", async () => {
    await admin.guardian.factors.set("sms", { enabled: true });
    await admin.guardian.policies.set(["all-applications"]);
    const email = `sms-${Date.now()}@example.com`;
    const phone = `+1415555${String(Date.now() % 10_000).padStart(4, "0")}`;
    const userId = await signUp(email);
    await admin.users.authenticationMethods.create(userId, { type: "phone", phone_number: phone });
    const { page } = await context("sms");
    const callback = callbacks.next("/callback");
    await logIn(page, email);
    await page.getByRole("heading", { name: "Verify your phone" }).waitFor();
    await screenshot(page, "mfa-11-phone-challenge.png");
    const { messages } = (await (await fetch(`${server.baseUrl}/__dev/messages?to=${encodeURIComponent(phone)}`)).json()) as { messages: { body: string }[] };
    const sms = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1] as string;
    expect(sms).toMatch(/^\d{6}$/);
    expect(server.log()).toContain(`[dev-sink] sms to ${phone}`);
    await page.getByLabel("6-digit code").fill(sms);
    await page.getByRole("button", { name: "Continue" }).click();
    expect((await redeem(callback)).amr).toEqual(["pwd", "sms", "mfa"]);

    // A new user sees the phone enrollment screen among the choices.
    const other = `sms-new-${Date.now()}@example.com`;
    await signUp(other);
    const { page: second } = await context("sms-enroll");
    await logIn(second, other);
    await second.getByRole("link", { name: /Text message/ }).click();
    await second.getByLabel("Phone number").waitFor();
    await screenshot(second, "mfa-12-phone-enrollment.png");
    await admin.guardian.policies.set([]);
  });
});
