import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { axeResults, screenshot } from "./helpers/browser";
import { browserSuite } from "./helpers/browser-suite";

/**
 * Issue 29 point 2 in Chromium: a third-party application shows the consent page (which passes axe-core);
 * Decline returns `access_denied` to the application, Accept returns a code; the reference platform's SDK
 * lists the stored grant (`userGrants.list`) and deletes it (`userGrants.delete`), after which the page
 * comes back.
 */

const random = () => randomBytes(6).toString("hex");
const PASSWORD = `Consent-Horse-${random()}`;

describe("consent for a third-party application in Chromium, grants through the auth0 SDK", () => {
  const suite = browserSuite("consent.e2e", "First-party App");
  let thirdParty: { client_id: string };
  let userId: string;
  const email = `consent-${random()}@example.com`;

  beforeAll(async () => {
    const created = await suite.admin.clients.create({
      name: "Partner Dashboard",
      app_type: "regular_web",
      is_first_party: false,
      callbacks: [suite.redirectUri],
      grant_types: ["authorization_code"],
    });
    thirdParty = { client_id: String(created.client_id) };
    userId = String((await suite.admin.users.create({ connection: "Username-Password-Authentication", email, password: PASSWORD, email_verified: true })).user_id);
  });

  const partnerUrl = (extra: Record<string, string> = {}) =>
    `${suite.server.baseUrl}/authorize?${new URLSearchParams({ client_id: thirdParty.client_id, redirect_uri: suite.redirectUri, response_type: "code", scope: "openid profile email", state: "partner", ...extra })}`;

  it("shows the consent page after login; Decline answers access_denied", { timeout: 120_000 }, async () => {
    const { page } = await suite.context("decline");
    await page.goto(partnerUrl());
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "Authorize Partner Dashboard" }).waitFor();
    expect(await page.locator("#consent-scopes li").allInnerTexts()).toEqual(["Your profile: name, nickname and picture", "Your email address"]);
    await screenshot(page, "consent-page.png");
    const result = await axeResults(page);
    expect(result.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
    const callback = suite.callbacks.next("/callback");
    await page.getByRole("button", { name: "Decline" }).click();
    const url = await callback;
    expect(url.searchParams.get("error")).toBe("access_denied");
    expect(url.searchParams.get("state")).toBe("partner");
    expect((await suite.admin.userGrants.list({ user_id: userId })).data).toEqual([]);
  });

  it("Accept returns a code; the SDK lists the grant, deletes it, and the page comes back", { timeout: 120_000 }, async () => {
    const { page } = await suite.context("accept");
    await page.goto(partnerUrl());
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Continue" }).click();
    const callback = suite.callbacks.next("/callback");
    await page.getByRole("button", { name: "Accept" }).click();
    expect((await callback).searchParams.get("code")).toBeTruthy();

    const grants = (await suite.admin.userGrants.list({ user_id: userId })).data;
    expect(grants).toEqual([expect.objectContaining({ clientID: thirdParty.client_id, user_id: userId, audience: `${suite.server.baseUrl}/userinfo`, scope: ["profile", "email"] })]);

    // With the grant and the browser's session, the next request is answered without any page.
    const silent = suite.callbacks.next("/callback");
    await page.goto(partnerUrl());
    expect((await silent).searchParams.get("code")).toBeTruthy();

    await suite.admin.userGrants.delete(String(grants[0]?.id));
    expect((await suite.admin.userGrants.list({ user_id: userId })).data).toEqual([]);
    await page.goto(partnerUrl());
    await page.getByRole("heading", { name: "Authorize Partner Dashboard" }).waitFor();
  });
});
