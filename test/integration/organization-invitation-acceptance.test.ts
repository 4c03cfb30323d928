import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, uniqueId } from "../helpers/api";
import { seedUser } from "../helpers/flows";
import { codeOf, errorCode, exchange, hostOf, openPage, orgClient, PASSWORD, pageLocation, startLogin, submit } from "../helpers/org-login";
import { databaseConnectionId, freshTenant } from "../helpers/organizations";
import { tenantSql } from "../helpers/outbox";

/**
 * Accepting an organization invitation through the real pages (issue 11 point 4): the link's parameters
 * go to /authorize, the invitee signs up (email fixed) or logs in, becomes a member and gets tokens in the
 * organization; the invitation is consumed exactly once.
 */

interface Invitation {
  id: string;
  ticket_id: string;
  invitation_url: string;
}

async function setup(connection: Record<string, unknown> = {}) {
  const { tenantId, api } = await freshTenant();
  const host = hostOf(tenantId);
  const client = await orgClient(tenantId, { organization_usage: "allow", initiate_login_uri: "https://app.example.com/login" });
  const connectionId = await databaseConnectionId(tenantId);
  const org = await api.json<{ id: string; name: string }>("POST", "/organizations", {
    name: uniqueId("inv").toLowerCase(),
    display_name: "Invited Org",
    enabled_connections: [{ connection_id: connectionId, ...connection }],
  });
  const invite = async (email: string, extra: Record<string, unknown> = {}) =>
    api.json<Invitation>("POST", `/organizations/${org.id}/invitations`, { inviter: { name: "Ann" }, invitee: { email }, client_id: client.client_id, send_invitation_email: false, ...extra });
  /** What an application does with the link: forwards invitation and organization to /authorize. */
  const follow = (invitation: Invitation) => {
    const link = new URL(invitation.invitation_url);
    return startLogin(host, client, { invitation: link.searchParams.get("invitation") as string, organization: link.searchParams.get("organization") as string });
  };
  const members = async () => (await api.json<Array<{ user_id: string; email: string }>>("GET", `/organizations/${org.id}/members`)).map((m) => m.email);
  return { tenantId, api, host, client, org, invite, follow, members };
}

describe("accepting an invitation (issue 11 point 4)", () => {
  it("a new invitee signs up with the invited address fixed, joins the organization and gets org_id; the invitation is gone", async () => {
    const { api, host, client, org, invite, follow, members } = await setup();
    const invitation = await invite("Newcomer@Example.com");
    const location = pageLocation(await follow(invitation));
    expect(location.startsWith("/u2/signup?state=")).toBe(true);
    const page = await openPage(host, location);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/<input id="email" name="email" type="email"[^>]*value="newcomer@example.com"[^>]*readonly/);
    expect(page.html).toContain("Sign up to join Invited Org");
    // A tampered form field does not change the address: the invitation fixes it.
    const signedUp = await submit(host, page, { email: "attacker@example.com", password: "a-long-password-1" });
    const tokens = await exchange(host, client, codeOf(signedUp));
    expect(tokens.idClaims).toMatchObject({ org_id: org.id, email: "newcomer@example.com" });
    expect(await members()).toEqual(["newcomer@example.com"]);
    expect((await api.call("GET", `/organizations/${org.id}/invitations/${invitation.id}`)).status).toBe(404);
    expect(await tenantSql(hostTenant(host), "SELECT user_id FROM users WHERE email = 'attacker@example.com'")).toEqual([]);
  });

  it("an invitee who already has an account logs in, joins and gets org_id", async () => {
    const { tenantId, host, client, org, invite, follow, members } = await setup();
    const user = await seedUser(tenantId, `${uniqueId("known")}@example.com`);
    const location = pageLocation(await follow(await invite(user.email as string)));
    expect(location.startsWith("/u2/login?state=")).toBe(true);
    const page = await openPage(host, location);
    expect(page.html).toContain("readonly");
    const tokens = await exchange(host, client, codeOf(await submit(host, page, { email: "ignored@example.com", password: PASSWORD })));
    expect(tokens.idClaims.org_id).toBe(org.id);
    expect(tokens.idClaims.sub).toBe(user.user_id);
    expect(await members()).toEqual([user.email]);
  });

  it("an invitation already accepted is refused with a clear page", async () => {
    const { tenantId, host, invite, follow } = await setup();
    const user = await seedUser(tenantId, `${uniqueId("twice")}@example.com`);
    const invitation = await invite(user.email as string);
    const page = await openPage(host, pageLocation(await follow(invitation)));
    codeOf(await submit(host, page, { email: user.email as string, password: PASSWORD }));
    const again = await follow(invitation);
    expect(again.status).toBe(400);
    const html = await again.text();
    expect(errorCode(html)).toBe("INVITATION_INVALID");
    expect(html).toContain("already been accepted");
  });

  it("an expired invitation is refused with a clear page, at /authorize and at the form post", async () => {
    const { tenantId, host, invite, follow, members } = await setup();
    const user = await seedUser(tenantId, `${uniqueId("late")}@example.com`);
    const invitation = await invite(user.email as string);
    const page = await openPage(host, pageLocation(await follow(invitation)));
    await tenantSql(tenantId, "UPDATE organization_invitations SET expires_at = ? WHERE id = ?", Date.now() - 1000, invitation.id);
    const posted = await submit(host, page, { email: user.email as string, password: PASSWORD });
    expect(posted.status).toBe(410);
    expect(errorCode(await posted.text())).toBe("INVITATION_EXPIRED");
    const res = await follow(invitation);
    expect(res.status).toBe(410);
    const html = await res.text();
    expect(errorCode(html)).toBe("INVITATION_EXPIRED");
    expect(html).toContain("This invitation has expired");
    expect(await members()).toEqual([]);
  });

  it("an invitation is consumed exactly once when two logins accept it at the same time", async () => {
    const { tenantId, host, client, org, invite, follow, members } = await setup();
    const user = await seedUser(tenantId, `${uniqueId("race")}@example.com`);
    const invitation = await invite(user.email as string);
    const pages = await Promise.all([1, 2, 3].map(async () => openPage(host, pageLocation(await follow(invitation)))));
    const answers = await Promise.all(pages.map((page) => submit(host, page, { email: user.email as string, password: PASSWORD })));
    const codes = answers.filter((res) => res.status === 302 && res.headers.get("location")?.includes("code="));
    const refused = answers.filter((res) => res.status === 400);
    expect(codes).toHaveLength(1);
    expect(refused).toHaveLength(2);
    for (const res of refused) expect(errorCode(await res.text())).toBe("INVITATION_INVALID");
    expect((await exchange(host, client, codeOf(codes[0] as Response))).idClaims.org_id).toBe(org.id);
    expect(await members()).toEqual([user.email]);
    expect(await tenantSql(tenantId, "SELECT count(*) AS n FROM organization_invitations")).toEqual([{ n: 0 }]);
  });

  it("the invitation's holder cannot spend it on another account (the object refuses another email)", async () => {
    const { tenantId, org, invite, members } = await setup();
    const other = await seedUser(tenantId, `${uniqueId("other")}@example.com`);
    const invitation = await invite("someone@example.com");
    const outcome = await env.TENANT.getByName(tenantId).organizations().admitLogin({
      organization_id: org.id,
      user_id: other.user_id,
      email: other.email,
      connection: "Username-Password-Authentication",
      ticket: invitation.ticket_id,
    });
    expect(outcome).toEqual({ ok: false, reason: "email_mismatch" });
    expect(await members()).toEqual([]);
    expect(await tenantSql(tenantId, "SELECT count(*) AS n FROM organization_invitations")).toEqual([{ n: 1 }]);
  });

  it("an invitation for another organization, or an unknown ticket, is refused", async () => {
    const { api, host, client, invite } = await setup();
    const invitation = await invite("x@example.com");
    const elsewhere = await api.json<{ id: string }>("POST", "/organizations", { name: uniqueId("else").toLowerCase() });
    const wrongOrg = await startLogin(host, client, { invitation: invitation.ticket_id, organization: elsewhere.id });
    expect(wrongOrg.status).toBe(400);
    expect(errorCode(await wrongOrg.text())).toBe("INVITATION_INVALID");
    const unknown = await startLogin(host, client, { invitation: "not-a-ticket", organization: new URL(invitation.invitation_url).searchParams.get("organization") as string });
    expect(unknown.status).toBe(400);
    expect(errorCode(await unknown.text())).toBe("INVITATION_INVALID");
  });

  it("Gatehouse's own invitation landing starts the login when the application has no login route", async () => {
    const { tenantId, api, host, org } = await setup();
    const plain = await orgClient(tenantId, { organization_usage: "allow" });
    const invitation = await api.json<Invitation>("POST", `/organizations/${org.id}/invitations`, {
      inviter: { name: "Ann" },
      invitee: { email: "landing@example.com" },
      client_id: plain.client_id,
      send_invitation_email: false,
    });
    const link = new URL(invitation.invitation_url);
    expect(link.pathname).toBe("/u2/invitation");
    const landing = await call(`${link.pathname}${link.search}`, { host, redirect: "manual" });
    expect(landing.status).toBe(302);
    const authorizeUrl = new URL(landing.headers.get("location") as string, `http://${host}`);
    expect(authorizeUrl.pathname).toBe("/authorize");
    expect(authorizeUrl.searchParams.get("invitation")).toBe(invitation.ticket_id);
    const next = await call(`${authorizeUrl.pathname}${authorizeUrl.search}`, { host, redirect: "manual" });
    expect(pageLocation(next).startsWith("/u2/signup?state=")).toBe(true);
    const bogus = await call("/u2/invitation?invitation=nope&organization=org_x", { host });
    expect(bogus.status).toBe(400);
  });
});

/** The tenant id of a tenant host. */
const hostTenant = (host: string) => host.split(".")[0] as string;
