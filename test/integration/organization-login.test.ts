import { describe, expect, it } from "vitest";
import { toBase64Url } from "../../src/shared/crypto/encoding";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";
import { call, uniqueId } from "../helpers/api";
import { redirectParams, seedUser, sessionCookie, tokenForm } from "../helpers/flows";
import {
  codeOf,
  errorCode,
  exchange,
  hostOf,
  loginThroughPages,
  openPage,
  orgClient,
  pageLocation,
  startLogin,
  submit,
} from "../helpers/org-login";
import { createOrg, freshTenant, onTenant, orgWithMembers } from "../helpers/organizations";

/** PATCH /api/v2/tenants/settings of a tenant. */
async function tenantSettings(tenantId: string, settings: Record<string, unknown>) {
  await onTenant(tenantId).json("PATCH", "/tenants/settings", settings);
}

/** A tenant with an organizations-enabled app, an organization (database connection enabled) and a member. */
async function world(connection: Record<string, unknown> = {}, clientSettings?: Record<string, unknown>) {
  const { tenantId, api } = await freshTenant();
  const host = hostOf(tenantId);
  const client = await orgClient(tenantId, clientSettings);
  const { org, users } = await orgWithMembers(tenantId, 1, connection);
  return { tenantId, api, host, client, org, member: users[0] as { user_id: string; email: string } };
}

const errorRedirect = (res: Response) => {
  expect(res.status).toBe(302);
  const { query } = redirectParams(res);
  return { error: query.get("error"), description: query.get("error_description") ?? "", state: query.get("state") };
};

describe("login in an organization (issue 11 point 5)", () => {
  it("a member logs in with organization=<id> through the login page and both tokens carry org_id (no org_name by default)", async () => {
    const { host, client, org, member } = await world();
    const res = await loginThroughPages(host, client, member.email, { organization: org.id });
    const tokens = await exchange(host, client, codeOf(res));
    expect(tokens.idClaims.org_id).toBe(org.id);
    expect(tokens.accessClaims.org_id).toBe(org.id);
    expect(tokens.idClaims.org_name).toBeUndefined();
    expect(tokens.accessClaims.org_name).toBeUndefined();
  });

  it("accepts the organization's name; with the tenant's allow_organization_name_in_authentication_api, tokens carry org_name too", async () => {
    const { tenantId, host, client, org, member } = await world();
    const byName = await exchange(host, client, codeOf(await loginThroughPages(host, client, member.email, { organization: org.name })));
    expect(byName.idClaims.org_id).toBe(org.id);
    await tenantSettings(tenantId, { allow_organization_name_in_authentication_api: true });
    const named = await exchange(host, client, codeOf(await loginThroughPages(host, client, member.email, { organization: org.name.toUpperCase() })));
    expect(named.idClaims).toMatchObject({ org_id: org.id, org_name: org.name });
    expect(named.accessClaims).toMatchObject({ org_id: org.id, org_name: org.name });
  });

  it("a user who is not a member is sent back to the application with access_denied", async () => {
    const { tenantId, host, client, org } = await world();
    const outsider = await seedUser(tenantId, `${uniqueId("out")}@example.com`);
    const outsiderEmail = outsider.email as string;
    const answer = errorRedirect(await loginThroughPages(host, client, outsiderEmail, { organization: org.id }));
    expect(answer).toEqual({ error: "access_denied", description: `user ${outsider.user_id} is not part of the ${org.id} organization`, state: "st" });
  });

  it("assign_membership_on_login makes a user who logs in through the organization a member", async () => {
    const { tenantId, api, host, client, org } = await world({ assign_membership_on_login: true });
    const newcomer = await seedUser(tenantId, `${uniqueId("new")}@example.com`);
    const tokens = await exchange(host, client, codeOf(await loginThroughPages(host, client, newcomer.email as string, { organization: org.id })));
    expect(tokens.idClaims.org_id).toBe(org.id);
    const members = await api.json<Array<{ user_id: string }>>("GET", `/organizations/${org.id}/members`);
    expect(members.map((m) => m.user_id)).toContain(newcomer.user_id);
  });

  it("an organization without the database connection enabled offers no password login", async () => {
    const { tenantId, host, client, member } = await world();
    const bare = await createOrg(tenantId);
    const page = await openPage(host, pageLocation(await startLogin(host, client, { organization: bare.id })));
    expect(page.status).toBe(400);
    expect(errorCode(page.html)).toBe("CONNECTION_NOT_FOUND");
    expect(member.email).toBeTruthy();
  });

  it("refuses organization for a client that denies organizations (the default), an unknown organization, and invitation without organization", async () => {
    const { tenantId, host, org } = await world();
    const denying = await orgClient(tenantId, {});
    expect(errorRedirect(await startLogin(host, denying, { organization: org.id }))).toMatchObject({ error: "invalid_request", description: "parameter organization is not allowed for this client" });
    const allowing = await orgClient(tenantId);
    expect(errorRedirect(await startLogin(host, allowing, { organization: "org_doesnotexist00" }))).toMatchObject({ error: "invalid_request" });
    expect(errorRedirect(await startLogin(host, allowing, { invitation: "abc" }))).toMatchObject({ error: "invalid_request" });
    // Without organization, an allowing client logs in as before, and tokens have no org_id.
    const start = await startLogin(host, allowing);
    expect(pageLocation(start).startsWith("/u2/login?state=")).toBe(true);
  });

  it("organization_usage require with no_prompt refuses a request without organization", async () => {
    const { tenantId, host } = await world();
    const requiring = await orgClient(tenantId, { organization_usage: "require" });
    expect(errorRedirect(await startLogin(host, requiring))).toMatchObject({ error: "invalid_request", description: "parameter organization is required for this client" });
  });

  it("pre_login_prompt asks for the organization's name first, then logs in in it", async () => {
    const { tenantId, host, org, member } = await world();
    const requiring = await orgClient(tenantId, { organization_usage: "require", organization_require_behavior: "pre_login_prompt" });
    const location = pageLocation(await startLogin(host, requiring));
    expect(location.startsWith("/u2/organization?state=")).toBe(true);
    const prompt = await openPage(host, location);
    expect(prompt.status).toBe(200);
    expect(prompt.html).toContain('<label for="organization">Organization name</label>');
    const unknown = await submit(host, prompt, { organization: "no-such-org" });
    expect(unknown.status).toBe(400);
    expect(errorCode(await unknown.text())).toBe("ORGANIZATION_NOT_FOUND");
    const chosen = await submit(host, prompt, { organization: org.name });
    const loginPath = pageLocation(chosen);
    expect(loginPath.startsWith("/u2/login?state=")).toBe(true);
    const login = await openPage(host, loginPath);
    const tokens = await exchange(host, requiring, codeOf(await submit(host, login, { email: member.email, password: "p4ssw0rd!" })));
    expect(tokens.idClaims.org_id).toBe(org.id);
  });

  it("post_login_prompt logs in first, then offers only the user's organizations", async () => {
    const { tenantId, api, host, org, member } = await world();
    const second = await createOrg(tenantId, { display_name: "Second Org" });
    await api.json("POST", `/organizations/${second.id}/members`, { members: [member.user_id] }, 204);
    const foreign = await createOrg(tenantId);
    const requiring = await orgClient(tenantId, { organization_usage: "require", organization_require_behavior: "post_login_prompt" });
    const login = await openPage(host, pageLocation(await startLogin(host, requiring)));
    const afterLogin = await submit(host, login, { email: member.email, password: "p4ssw0rd!" });
    const pickerPath = pageLocation(afterLogin);
    expect(pickerPath.startsWith("/u2/organization?state=")).toBe(true);
    const picker = await openPage(host, pickerPath);
    expect(picker.html).toContain("Choose your organization");
    expect(picker.html).toContain(`value="${org.id}"`);
    expect(picker.html).toContain("Second Org");
    expect(picker.html).not.toContain(foreign.id);
    expect((await submit(host, picker, { organization: foreign.id })).status).toBe(400);
    const tokens = await exchange(host, requiring, codeOf(await submit(host, picker, { organization: org.id })));
    expect(tokens.idClaims.org_id).toBe(org.id);
  });

  it("post_login_prompt tells a user without any organization so, and issues nothing", async () => {
    const { tenantId, host } = await world();
    const loner = await seedUser(tenantId, `${uniqueId("alone")}@example.com`);
    const requiring = await orgClient(tenantId, { organization_usage: "require", organization_require_behavior: "post_login_prompt" });
    const login = await openPage(host, pageLocation(await startLogin(host, requiring)));
    const picker = await openPage(host, pageLocation(await submit(host, login, { email: loner.email as string, password: "p4ssw0rd!" })));
    expect(picker.status).toBe(403);
    expect(errorCode(picker.html)).toBe("NO_ORGANIZATIONS");
  });

  it("a live session answers at once for a member, and with access_denied for a non-member", async () => {
    const { tenantId, host, client, org, member } = await world();
    const cookie = await sessionCookie(tenantId, member.user_id, client.client_id);
    const tokens = await exchange(host, client, codeOf(await startLogin(host, client, { organization: org.id }, cookie)));
    expect(tokens.idClaims.org_id).toBe(org.id);
    const outsider = await seedUser(tenantId, `${uniqueId("sso")}@example.com`);
    const outsiderCookie = await sessionCookie(tenantId, outsider.user_id, client.client_id);
    expect(errorRedirect(await startLogin(host, client, { organization: org.id }, outsiderCookie)).error).toBe("access_denied");
  });

  it("the organization's branding overrides the tenant's on the login page", async () => {
    const { tenantId, api, host, client, org } = await world();
    await api.json("PATCH", "/branding", { colors: { primary: "#111111", page_background: "#eeeeee" }, logo_url: "https://tenant.example/logo.png" });
    await api.json("PATCH", `/organizations/${org.id}`, { branding: { logo_url: "https://org.example/logo.png", colors: { primary: "#224466", page_background: "#ddeeff" } } });
    const plain = await openPage(host, pageLocation(await startLogin(host, client)));
    expect(plain.html).toContain("--gh-primary:#111111");
    expect(plain.html).toContain("https://tenant.example/logo.png");
    const branded = await openPage(host, pageLocation(await startLogin(host, client, { organization: org.id })));
    expect(branded.html).toContain("--gh-primary:#224466");
    expect(branded.html).toContain("--gh-page-bg:#ddeeff");
    expect(branded.html).toContain("https://org.example/logo.png");
    expect(branded.html).not.toContain("https://tenant.example/logo.png");
    expect(tenantId).toBeTruthy();
  });

  it("the sign-up link is offered in an organization only when its connection has is_signup_enabled", async () => {
    const { tenantId, api, host, client, org } = await world();
    const closed = await openPage(host, pageLocation(await startLogin(host, client, { organization: org.id })));
    expect(closed.html).not.toContain("/u2/signup?state=");
    const signupClosed = await call(closed.path.replace("/u2/login", "/u2/signup"), { host });
    expect(signupClosed.status).toBe(403);
    const connectionId = (await api.json<Array<{ connection_id: string }>>("GET", `/organizations/${org.id}/enabled_connections`))[0]?.connection_id;
    await api.json("PATCH", `/organizations/${org.id}/enabled_connections/${connectionId}`, { is_signup_enabled: true });
    const open = await openPage(host, pageLocation(await startLogin(host, client, { organization: org.id })));
    expect(open.html).toContain("/u2/signup?state=");
    expect(tenantId).toBeTruthy();
  });
});

describe("switching organization on refresh and token exchange (SPEC §4.1)", () => {
  async function loggedIn() {
    const w = await world();
    const other = await createOrg(w.tenantId, { enabled_connections: [] });
    await w.api.json("POST", `/organizations/${other.id}/members`, { members: [w.member.user_id] }, 204);
    const foreign = await createOrg(w.tenantId);
    const tokens = await exchange(w.host, w.client, codeOf(await loginThroughPages(w.host, w.client, w.member.email, { organization: w.org.id })));
    expect(tokens.refresh_token).toBeTruthy();
    const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
      tokenForm({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: w.client.client_id, client_secret: w.client.client_secret, ...extra }, {}, w.host);
    return { ...w, other, foreign, tokens, refresh };
  }

  it("keeps the original organization without the parameter and switches to another one the user belongs to", async () => {
    const { org, other, tokens, refresh } = await loggedIn();
    const kept = (await (await refresh(tokens.refresh_token as string)).json()) as { id_token: string; access_token: string; refresh_token: string };
    const { decodeJwt } = await import("jose");
    expect(decodeJwt(kept.id_token).org_id).toBe(org.id);
    const switched = await refresh(kept.refresh_token, { organization: other.id });
    const body = (await switched.json()) as { id_token: string; access_token: string; refresh_token: string };
    expect(switched.status, JSON.stringify(body)).toBe(200);
    expect(decodeJwt(body.id_token).org_id).toBe(other.id);
    expect(decodeJwt(body.access_token).org_id).toBe(other.id);
    const byName = (await (await refresh(body.refresh_token, { organization: other.name })).json()) as { id_token: string };
    expect(decodeJwt(byName.id_token).org_id).toBe(other.id);
  });

  it("refuses an organization the user does not belong to without burning the refresh token", async () => {
    const { api, client, foreign, tokens, refresh } = await loggedIn();
    // No leeway: a refused switch that rotated the token would make the next use a reuse, revoking the family.
    await api.json("PATCH", `/clients/${client.client_id}`, { refresh_token: { leeway: 0 } }, 200);
    const refused = await refresh(tokens.refresh_token as string, { organization: foreign.id });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await refresh(tokens.refresh_token as string, { organization: "org_unknown" })).status).toBe(403);
    expect((await refresh(tokens.refresh_token as string)).status).toBe(200);
  });

  it("a forged refresh token learns nothing about memberships: it reads as an invalid token whatever the organization", async () => {
    const { tenantId, member, other, foreign, refresh } = await loggedIn();
    const forged = `v1.${tenantId}.${toBase64Url(new TextEncoder().encode(member.user_id))}.rt_${"A".repeat(22)}.${"B".repeat(43)}`;
    for (const organization of [other.id, foreign.id]) {
      const res = await refresh(forged, { organization });
      expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "Invalid refresh token" });
    }
  });

  it("a member removed from the organization can no longer refresh in it", async () => {
    const { api, org, member, tokens, refresh } = await loggedIn();
    await api.json("DELETE", `/organizations/${org.id}/members`, { members: [member.user_id] }, 204);
    const res = await refresh(tokens.refresh_token as string);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error_description: string }).error_description).toContain("no longer a member");
  });

  it("token exchange switches a user's access token to another of the user's organizations", async () => {
    const { api, host, client, other, foreign, tokens } = await loggedIn();
    const grantTypes = ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"];
    await api.json("PATCH", `/clients/${client.client_id}`, { grant_types: grantTypes });
    const exchangeTo = (organization: string) =>
      tokenForm(
        {
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: tokens.access_token,
          subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
          client_id: client.client_id,
          client_secret: client.client_secret,
          organization,
        },
        {},
        host,
      );
    const ok = await exchangeTo(other.id);
    const body = (await ok.json()) as { access_token: string };
    expect(ok.status, JSON.stringify(body)).toBe(200);
    const { decodeJwt } = await import("jose");
    expect(decodeJwt(body.access_token).org_id).toBe(other.id);
    expect((await exchangeTo(foreign.id)).status).toBe(403);
  });

  it("a client that denies organizations cannot switch on refresh", async () => {
    const { tenantId, api, client, tokens, refresh } = await loggedIn();
    await api.json("PATCH", `/clients/${client.client_id}`, { organization_usage: "deny" });
    invalidateTenantConfig(tenantId);
    const res = await refresh(tokens.refresh_token as string, { organization: "anything" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
  });
});
