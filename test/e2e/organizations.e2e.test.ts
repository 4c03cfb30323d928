import { randomBytes } from "node:crypto";
import { ManagementClient, ManagementError } from "auth0";
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oidc from "openid-client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";
import { type CallbackServer, type ContextLog, isLoopbackUrl, launchChromium, newRecordedContext, screenshot, startCallbackServer } from "./helpers/browser";
import { tenantServer } from "./helpers/tenant-server";

/**
 * Organizations end to end (issue 11 "Proof"), against a running `wrangler dev`:
 * - the reference platform's Node SDK (`auth0` 7.1.0) manages organizations, their connections, members, member
 *   roles and invitations with its typed calls (its paging helpers and error classes included);
 * - the invitation email lands in the development sink (GET /__dev/mail, the alias of /__dev/messages);
 * - `openid-client` builds the authorization request an application makes from the invitation link, headless
 *   Chromium signs the invitee up through the real pages, openid-client redeems the code, and `jose` verifies
 *   the ID token, whose `org_id` names the organization.
 */

const random = () => randomBytes(5).toString("hex");

describe("organizations through the auth0 SDK, openid-client and Chromium", () => {
  let server: RunningServer;
  let management: ManagementClient;
  let callbacks: CallbackServer;
  let browser: Browser;
  let app: { client_id: string; client_secret: string };
  let org: { id: string; name: string };
  let connectionId: string;
  let member: { user_id: string; email: string };
  let invitation: { id: string; invitation_url: string; invitee: { email: string } };
  const contextLogs: ContextLog[] = [];
  let failed = false;

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });

  beforeAll(async () => {
    server = await tenantServer(await startServer({ shareable: true, vars: { DEV_MESSAGE_SINK: "1" } }), "organizations");
    management = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    callbacks = await startCallbackServer();
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await callbacks?.close().catch(() => undefined);
    if (failed && server) process.stderr.write(`\n--- wrangler output (organizations.e2e) ---\n${server.log()}\n`);
    await server?.stop();
  }, 60_000);

  it("creates an application that allows organizations, with its login route", async () => {
    const created = await management.clients.create({
      name: "E2E Org App",
      app_type: "regular_web",
      callbacks: [`${callbacks.origin}/callback`],
      grant_types: ["authorization_code", "refresh_token"],
      initiate_login_uri: `${callbacks.origin}/login`,
      organization_usage: "allow",
    });
    expect(created.organization_usage).toBe("allow");
    expect(created.initiate_login_uri).toBe(`${callbacks.origin}/login`);
    app = { client_id: created.client_id as string, client_secret: created.client_secret as string };
  });

  it("creates, reads (by id and name), updates and lists organizations with the SDK", async () => {
    const name = `e2e-${random()}`;
    const created = await management.organizations.create({
      name,
      display_name: "E2E Org",
      // A loopback logo: the login pages show it, and the browser must not leave this machine.
      branding: { logo_url: `${callbacks.origin}/org-logo.png`, colors: { primary: "#0a5", page_background: "#fff" } },
      metadata: { plan: "enterprise" },
    });
    expect(created).toMatchObject({ name, display_name: "E2E Org", metadata: { plan: "enterprise" } });
    org = { id: created.id as string, name };
    expect((await management.organizations.get(org.id)).name).toBe(name);
    expect((await management.organizations.getByName(name)).id).toBe(org.id);
    const updated = await management.organizations.update(org.id, { display_name: "E2E Organization", metadata: { region: "eu" } });
    expect(updated).toMatchObject({ display_name: "E2E Organization", metadata: { plan: "enterprise", region: "eu" } });

    for (let i = 0; i < 3; i++) await management.organizations.create({ name: `e2e-extra-${i}-${random()}` });
    // The SDK pages with checkpoint parameters (take, from) and follows `next` itself.
    const seen: string[] = [];
    for await (const o of await management.organizations.list({ take: 2 })) seen.push(o.id as string);
    expect(seen).toHaveLength(4);
    expect(seen).toContain(org.id);
  });

  it("enables the database connection for the organization", async () => {
    const connections = await management.connections.list({ name: "Username-Password-Authentication" });
    connectionId = connections.data[0]?.id as string;
    expect(connectionId).toBeTruthy();
    const added = await management.organizations.enabledConnections.add(org.id, { connection_id: connectionId, assign_membership_on_login: false });
    expect(added).toMatchObject({ connection_id: connectionId, assign_membership_on_login: false, connection: { name: "Username-Password-Authentication" } });
    const listed = await management.organizations.enabledConnections.list(org.id);
    expect(listed.data.map((c) => c.connection_id)).toEqual([connectionId]);
    const updated = await management.organizations.enabledConnections.update(org.id, connectionId, { show_as_button: false });
    expect(updated.show_as_button).toBe(false);
  });

  it("adds, lists and removes members and their roles with the SDK", async () => {
    const email = `member-${random()}@example.com`;
    const signup = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.client_id, email, password: `Member-${random()}-pw`, connection: "Username-Password-Authentication" }),
    });
    expect(signup.status).toBe(200);
    member = { user_id: ((await signup.json()) as { id: string }).id, email };
    await management.organizations.members.create(org.id, { members: [member.user_id] });
    const members = await management.organizations.members.list(org.id);
    expect(members.data).toEqual([expect.objectContaining({ user_id: member.user_id, email })]);
    const mine = await management.users.organizations.list(member.user_id);
    expect(mine.data.map((o) => o.id)).toEqual([org.id]);

    // Member roles, through the SDK's organizations.members.roles.
    const role = await management.roles.create({ name: `org-role-${random()}`, description: "E2E org role" });
    await management.organizations.members.roles.assign(org.id, member.user_id, { roles: [role.id as string] });
    const roles = await management.organizations.members.roles.list(org.id, member.user_id);
    expect(roles.data).toEqual([expect.objectContaining({ id: role.id, name: role.name })]);
    const withRoles = await management.organizations.members.list(org.id, { fields: "user_id,roles", include_fields: true });
    expect(withRoles.data).toEqual([{ user_id: member.user_id, roles: [{ id: role.id, name: role.name }] }]);
    await management.organizations.members.roles.delete(org.id, member.user_id, { roles: [role.id as string] });
    expect((await management.organizations.members.roles.list(org.id, member.user_id)).data).toEqual([]);

    await management.organizations.members.delete(org.id, { members: [member.user_id] });
    expect((await management.organizations.members.list(org.id)).data).toEqual([]);
  });

  it("refuses an invitation without client_id with the SDK's BadRequestError naming the field", async () => {
    const error = await management.organizations.invitations
      .create(org.id, { inviter: { name: "Admin" }, invitee: { email: "x@example.com" } } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManagementError);
    expect((error as ManagementError).statusCode).toBe(400);
    expect(JSON.stringify((error as ManagementError).body)).toContain("client_id");
  });

  it("invites someone: the SDK gets the invitation and the email carries its link", async () => {
    const email = `invitee-${random()}@example.com`;
    const created = await management.organizations.invitations.create(org.id, { inviter: { name: "Ann Admin" }, invitee: { email }, client_id: app.client_id });
    invitation = created as typeof invitation;
    const link = new URL(invitation.invitation_url);
    expect(`${link.origin}${link.pathname}`).toBe(`${callbacks.origin}/login`);
    expect(link.searchParams.get("organization")).toBe(org.id);
    expect(link.searchParams.get("organization_name")).toBe(org.name);
    expect(link.searchParams.get("invitation")).toBe(created.ticket_id);
    expect(Date.parse(created.expires_at as string) - Date.parse(created.created_at as string)).toBe(604_800_000);
    const listed = await management.organizations.invitations.list(org.id);
    expect(listed.data.map((i) => i.id)).toEqual([invitation.id]);
    expect((await management.organizations.invitations.get(org.id, invitation.id)).invitee?.email).toBe(email);

    const mail = (await (await fetch(`${server.baseUrl}/__dev/mail?to=${encodeURIComponent(email)}`)).json()) as { messages: Array<{ subject: string; text: string }> };
    expect(mail.messages).toHaveLength(1);
    expect(mail.messages[0]?.subject).toBe("Ann Admin has invited you to join E2E Organization");
    expect(mail.messages[0]?.text).toContain(invitation.invitation_url);
  });

  it("the invitee accepts in Chromium; openid-client redeems the code and jose verifies org_id", async () => {
    const config = await oidc.discovery(new URL(server.issuer), app.client_id, app.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
    // What the application's login route does with the link: forward invitation and organization.
    const link = new URL(invitation.invitation_url);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${callbacks.origin}/callback`,
      scope: "openid profile email",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
      invitation: link.searchParams.get("invitation") as string,
      organization: link.searchParams.get("organization") as string,
    });
    const { context, page, log } = await newRecordedContext(browser);
    contextLogs.push(log);
    try {
      await page.goto(url.href);
      expect(new URL(page.url()).pathname).toBe("/u2/signup");
      const emailField = page.getByLabel("Email address");
      expect(await emailField.inputValue()).toBe(invitation.invitee.email);
      expect(await emailField.getAttribute("readonly")).not.toBeNull();
      expect(await page.locator(".subtitle").textContent()).toContain("E2E Organization");
      // The organization's branding, not the tenant's, is on the page.
      expect(await page.locator("img.logo").getAttribute("src")).toBe(`${callbacks.origin}/org-logo.png`);
      await screenshot(page, "organization-invitation-signup.png");
      await page.getByLabel("Password", { exact: true }).fill(`Invitee-${random()}-pw`);
      const arrived = callbacks.next("/callback");
      await page.getByRole("button", { name: "Sign up" }).click();
      const callbackUrl = await arrived;
      expect(callbackUrl.searchParams.get("error")).toBeNull();

      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      const jwks = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(tokens.id_token as string, jwks, { issuer: server.issuer, audience: app.client_id, algorithms: ["RS256"] });
      expect(payload.org_id).toBe(org.id);
      expect(payload.email).toBe(invitation.invitee.email);
      expect(payload.nonce).toBe(nonce);
      const access = await jwtVerify(tokens.access_token, jwks, { issuer: server.issuer, algorithms: ["RS256"] });
      expect(access.payload.org_id).toBe(org.id);
    } finally {
      await context.close();
    }
    // The invitee is a member now, and the invitation is spent.
    const members = await management.organizations.members.list(org.id);
    expect(members.data.map((m) => m.email)).toEqual([invitation.invitee.email]);
    expect((await management.organizations.invitations.list(org.id)).data).toEqual([]);
  });

  it("a spent invitation link is refused with a clear page", async () => {
    const link = new URL(invitation.invitation_url);
    const { context, page, log } = await newRecordedContext(browser);
    contextLogs.push(log);
    try {
      const query = new URLSearchParams({
        client_id: app.client_id,
        redirect_uri: `${callbacks.origin}/callback`,
        response_type: "code",
        scope: "openid",
        invitation: link.searchParams.get("invitation") as string,
        organization: org.id,
      });
      const response = await page.goto(`${server.baseUrl}/authorize?${query}`);
      expect(response?.status()).toBe(400);
      expect(await page.getByRole("alert").getAttribute("data-error-code")).toBe("INVITATION_INVALID");
    } finally {
      await context.close();
    }
  });

  it("deletes the organization with the SDK; reading it again is the SDK's NotFoundError", async () => {
    await management.organizations.delete(org.id);
    const error = await management.organizations.get(org.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManagementError);
    expect((error as ManagementError).statusCode).toBe(404);
  });

  it("kept every browser request on loopback", () => {
    const all = contextLogs.flatMap((log) => log.requests);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((u) => !isLoopbackUrl(u) && !u.startsWith("data:") && !u.startsWith("about:"))).toEqual([]);
  });
});
