import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { call, createTenant, uniqueId } from "../helpers/api";
import { onTenant } from "../helpers/actions";
import { pendingLogin, seedClient, seedUser, type TestClient, tokenForm } from "../helpers/flows";
import { tenantSql } from "../helpers/outbox";

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "correct-horse-9";

/** A tenant with an application and a second database connection (the older account lives there). */
async function setup() {
  const tenant = await createTenant();
  const client = await seedClient(tenant, { callbacks: [CALLBACK] });
  const res = await onTenant(tenant, "POST", "/connections", { name: "legacy-db", strategy: "auth0" });
  expect(res.status, await res.clone().text()).toBe(201);
  return { tenant, client };
}

/** An account in the legacy connection, created through the API. */
async function legacyAccount(tenant: string, email: string, verified = true) {
  const res = await onTenant(tenant, "POST", "/users", { connection: "legacy-db", email, password: "Legacy-pass-123", email_verified: verified });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { user_id: string }).user_id;
}

/** A password login through the login page, redeemed: answers the ID token's subject. */
async function loginSubject(tenant: string, client: TestClient, email: string): Promise<string> {
  const pending = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK });
  const res = await call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password: PASSWORD }).toString(),
  });
  const code = new URL(res.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const tokens = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, `${tenant}.localhost:8787`);
  expect(tokens.status, await tokens.clone().text()).toBe(200);
  return String(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).sub);
}

const linkedTo = async (tenant: string, userId: string) => (await tenantSql<{ linked_to: string | null }>(tenant, "SELECT linked_to FROM users WHERE user_id = ?", userId))[0]?.linked_to;

describe("account linking (SPEC §6.2, issue 13 point 6)", () => {
  it("builtin: a newer account with the same verified email is linked into the older one, and the login continues as the primary; again, nothing changes", async () => {
    const { tenant, client } = await setup();
    const email = `${uniqueId("u")}@example.com`;
    const primary = await legacyAccount(tenant, email);
    const newer = await seedUser(tenant, email, PASSWORD);
    expect(await loginSubject(tenant, client, email)).toBe(primary);
    expect(await linkedTo(tenant, newer.user_id)).toBe(primary);
    const identities = ((await (await onTenant(tenant, "GET", `/users/${encodeURIComponent(primary)}`)).json()) as { identities: { user_id: string }[] }).identities;
    expect(identities.map((i) => i.user_id)).toContain(newer.user_id.split("|")[1]);
    // Idempotent: the next login finds the account linked and logs in as the primary again.
    expect(await loginSubject(tenant, client, email)).toBe(primary);
    expect(await linkedTo(tenant, newer.user_id)).toBe(primary);
  });

  it("is a no-op when the email is unverified, or when the user is the older account (already primary)", async () => {
    const { tenant, client } = await setup();
    const unverifiedEmail = `${uniqueId("u")}@example.com`;
    await legacyAccount(tenant, unverifiedEmail);
    const unverified = await seedUser(tenant, unverifiedEmail, PASSWORD);
    await tenantSql(tenant, "UPDATE users SET email_verified = 0 WHERE user_id = ?", unverified.user_id);
    expect(await loginSubject(tenant, client, unverifiedEmail)).toBe(unverified.user_id);
    expect(await linkedTo(tenant, unverified.user_id)).toBeNull();

    const olderEmail = `${uniqueId("u")}@example.com`;
    const older = await seedUser(tenant, olderEmail, PASSWORD);
    const later = await legacyAccount(tenant, olderEmail);
    expect(await loginSubject(tenant, client, olderEmail)).toBe(older.user_id);
    expect(await linkedTo(tenant, older.user_id)).toBeNull();
    expect(await linkedTo(tenant, later)).toBeNull();
  });

  it("a client's user_linking_mode off disables it; template links only where the account-linking hook is bound", async () => {
    const { tenant, client } = await setup();
    expect((await onTenant(tenant, "PATCH", `/clients/${client.client_id}`, { user_linking_mode: "off" })).status).toBe(200);
    const offEmail = `${uniqueId("u")}@example.com`;
    await legacyAccount(tenant, offEmail);
    const off = await seedUser(tenant, offEmail, PASSWORD);
    expect(await loginSubject(tenant, client, offEmail)).toBe(off.user_id);

    expect((await onTenant(tenant, "PATCH", `/clients/${client.client_id}`, { user_linking_mode: "template" })).status).toBe(200);
    const templateEmail = `${uniqueId("u")}@example.com`;
    const primary = await legacyAccount(tenant, templateEmail);
    const account = await seedUser(tenant, templateEmail, PASSWORD);
    expect(await loginSubject(tenant, client, templateEmail)).toBe(account.user_id);
    const hook = await onTenant(tenant, "POST", "/hooks", { trigger_id: "post-user-login", template_id: "account-linking" });
    expect(hook.status).toBe(201);
    expect(await hook.json()).toMatchObject({ trigger_id: "post-user-login", template_id: "account-linking", enabled: true });
    expect(await loginSubject(tenant, client, templateEmail)).toBe(primary);
  });

  it("the account-linking template binds to post-user-login, post-user-registration and post-user-update only", async () => {
    const { tenant } = await setup();
    for (const trigger of ["post-user-login", "post-user-registration", "post-user-update"]) {
      expect((await onTenant(tenant, "POST", "/hooks", { trigger_id: trigger, template_id: "account-linking" })).status, trigger).toBe(201);
    }
    expect((await onTenant(tenant, "POST", "/hooks", { trigger_id: "credentials-exchange", template_id: "account-linking" })).status).toBe(400);
    expect((await onTenant(tenant, "POST", "/hooks", { trigger_id: "post-user-login", template_id: "other-template" })).status).toBe(400);
    expect((await onTenant(tenant, "POST", "/hooks", { trigger_id: "post-user-login", template_id: "account-linking", url: "https://hooks.example.com/x" })).status).toBe(400);
  });
});
