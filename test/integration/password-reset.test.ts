import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, mgmt } from "../helpers/api";
import { pendingLogin, seedClient, seedUser, sessionCookie, type TestClient } from "../helpers/flows";
import { runAlarm, sinkTo } from "../helpers/jobs";
import { csrfOf, errorCodeOf, locationOf, passwordLogin, TestBrowser } from "../helpers/mfa";
import { logsOf } from "../helpers/outbox";
import { loginOffline, refreshGrant, refreshSetup } from "../helpers/refresh";
import { expectRefusals, reachKit } from "../helpers/route-reach";
import { api, createConnection, DB } from "../helpers/users";

/**
 * Issue 29 points 0 and 1: the login pages offer the application's own database connection, and a password
 * is reset end to end: "Forgot password?", the email (read from the development sink), the single-use link,
 * the connection's policy, the sessions and refresh tokens it ends, the management API's tickets.
 */

const CALLBACK = "https://app.example.com/callback";
const OLD = "p4ssw0rd!";
const NEW = "n3w-Passw0rd!";
const SENT = "We've just sent you an email to reset your password.";
let tenant: string;
let client: TestClient;
const host = () => `${tenant}.localhost:8787`;
const newEmail = () => `reset-${crypto.randomUUID().slice(0, 8)}@example.com`;

beforeAll(async () => {
  tenant = await createTenant();
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

afterEach(() => setClock());

/** The reset link in the newest email to an address, once the relay (the alarm) sent it. */
async function resetLink(email: string, t = tenant): Promise<string> {
  await runAlarm(t);
  const [mail] = await sinkTo(t, email);
  expect(mail?.subject).toBe("Reset your password");
  const link = /https?:\/\/\S+\/u2\/reset-password\/change\?\S+/.exec(mail?.text ?? "")?.[0];
  expect(link, mail?.text).toBeTruthy();
  return link as string;
}

const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;
const ticketOf = (link: string) => new URL(link).searchParams.get("ticket") as string;

/** Posts a new password for a link's ticket. */
function setPassword(link: string, password: string, confirm = password, t = tenant) {
  return new TestBrowser(`${t}.localhost:8787`).post("/u2/reset-password/change", { ticket: ticketOf(link), password, password_confirm: confirm });
}

const changePassword = (body: Record<string, unknown>, t = tenant, headers: Record<string, string> = {}) =>
  call("/dbconnections/change_password", { method: "POST", host: `${t}.localhost:8787`, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

async function loginStatus(email: string, password: string, t = tenant, c = client) {
  return (await passwordLogin(t, c.client_id, email, password)).res.status;
}

describe("the application's own database connection (point 0)", () => {
  it("an application enabled only for a database connection of another name logs in with it", async () => {
    const t = await createTenant();
    const id = await createConnection(t, "Customers", "auth0");
    const app = await seedClient(t, { callbacks: [CALLBACK] });
    expect((await api(t, "PATCH", `/clients/${app.client_id}/connections`, [id])).status).toBe(200);
    expect((await api(t, "POST", "/users", { connection: "Customers", email: "c@example.com", password: OLD })).status).toBe(201);
    const login = await pendingLogin(t, app.client_id);
    const page = await call(`/u2/login?state=${login.state}`, { host: `${t}.localhost:8787` });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('href="/u2/reset-password?state=');
    expect(await loginStatus("c@example.com", OLD, t, app)).toBe(302);
  });

  it("with several enabled, the first in the client's order serves the form and connection= picks another", async () => {
    const t = await createTenant();
    const first = await createConnection(t, "First-DB", "auth0");
    const second = await createConnection(t, "Second-DB", "auth0", { disable_self_service_change_password: true });
    const app = await seedClient(t, { callbacks: [CALLBACK] });
    expect((await api(t, "PATCH", `/clients/${app.client_id}/connections`, [first, second])).status).toBe(200);
    for (const connection of ["First-DB", "Second-DB"]) {
      expect((await api(t, "POST", "/users", { connection, email: `${connection}@example.com`, password: OLD })).status).toBe(201);
    }
    expect(await loginStatus("First-DB@example.com", OLD, t, app)).toBe(302);
    expect(await loginStatus("Second-DB@example.com", OLD, t, app)).toBe(403);
    const picked = await passwordLogin(t, app.client_id, "Second-DB@example.com", OLD, { connection: "Second-DB" });
    expect(picked.res.status).toBe(302);
    // Second-DB disables self-service reset: no link, and the page refuses.
    const login = await pendingLogin(t, app.client_id, { connection: "Second-DB" });
    expect(await (await call(`/u2/login?state=${login.state}`, { host: `${t}.localhost:8787` })).text()).not.toContain("Forgot password?");
    expect((await call(`/u2/reset-password?state=${login.state}`, { host: `${t}.localhost:8787` })).status).toBe(403);
    // A database connection the application does not have is not offered.
    expect((await api(t, "PATCH", `/clients/${app.client_id}/connections`, [first])).status).toBe(200);
    const other = await pendingLogin(t, app.client_id, { connection: "Second-DB" });
    const refused = await call(`/u2/login?state=${other.state}`, { host: `${t}.localhost:8787` });
    expect(refused.status).toBe(400);
    expect(errorCodeOf(await refused.text())).toBe("CONNECTION_NOT_FOUND");
  });
});

describe("password reset from the login page", () => {
  it("Forgot password? → email → new password under the policy → the old password refused, the new one accepted", async () => {
    const email = newEmail();
    const user = await seedUser(tenant, email, OLD);
    const browser = new TestBrowser(host());
    const login = await pendingLogin(tenant, client.client_id);
    const loginPage = await (await browser.get(`/u2/login?state=${login.state}`)).text();
    expect(loginPage).toContain(`<a href="/u2/reset-password?state=${login.state}">Forgot password?</a>`);
    const form = await (await browser.get(`/u2/reset-password?state=${login.state}`)).text();
    expect(form).toContain("Forgot your password?");
    const sent = await browser.post(`/u2/reset-password?state=${login.state}`, { _csrf: csrfOf(form), email: email.toUpperCase() });
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain("Check your email");

    const link = await resetLink(email);
    const page = await call(pathOf(link), { host: host() });
    expect(page.status).toBe(200);
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await page.text()).toContain("At least 8 characters.");

    const weak = await setPassword(link, "short");
    expect(weak.status).toBe(400);
    const weakHtml = await weak.text();
    expect(errorCodeOf(weakHtml)).toBe("PASSWORD_TOO_SHORT");
    expect(weakHtml).toContain("Password must be at least 8 characters long.");
    expect(errorCodeOf(await (await setPassword(link, NEW, "something-else")).text())).toBe("PASSWORDS_DIFFERENT");
    expect(errorCodeOf(await (await setPassword(link, OLD)).text())).toBe("PASSWORD_REUSED");

    const done = await setPassword(link, NEW);
    expect(done.status).toBe(200);
    const doneHtml = await done.text();
    expect(doneHtml).toContain("Password changed");
    expect(doneHtml).toContain(`href="/u2/login?state=${login.state}"`);
    expect(await loginStatus(email, OLD)).toBe(403);
    expect(await loginStatus(email, NEW)).toBe(302);

    // Single use: the same link (page or form) is spent.
    const again = await call(pathOf(link), { host: host() });
    expect(again.status).toBe(400);
    expect(errorCodeOf(await again.text())).toBe("INVALID_TICKET");
    expect((await setPassword(link, "another-Pw-9")).status).toBe(400);

    const types = (await logsOf(tenant, `?q=${encodeURIComponent(`user_id:"${user.user_id}"`)}`)).map((l) => l.type);
    expect(types).toEqual(expect.arrayContaining(["scpr", "fcp", "scp"]));
  });

  it("the link expires after 24 hours", async () => {
    const email = newEmail();
    await seedUser(tenant, email, OLD);
    expect((await changePassword({ client_id: client.client_id, email, connection: DB })).status).toBe(200);
    const link = await resetLink(email);
    setClock(() => Date.now() + 86_400_000 + 1_000);
    const res = await call(pathOf(link), { host: host() });
    expect(res.status).toBe(400);
    expect(errorCodeOf(await res.text())).toBe("INVALID_TICKET");
    expect((await setPassword(link, NEW)).status).toBe(400);
    setClock();
    expect(await loginStatus(email, OLD)).toBe(302);
  });

  it("a link is spent after five refused passwords (each may cost bcrypt work): the sixth try is an invalid link", async () => {
    const email = newEmail();
    await seedUser(tenant, email, OLD);
    expect((await changePassword({ client_id: client.client_id, email, connection: DB })).status).toBe(200);
    const link = await resetLink(email);
    for (let i = 0; i < 5; i++) expect(errorCodeOf(await (await setPassword(link, OLD)).text())).toBe("PASSWORD_REUSED");
    const spent = await setPassword(link, NEW);
    expect(spent.status).toBe(400);
    expect(errorCodeOf(await spent.text())).toBe("INVALID_TICKET");
    expect(await loginStatus(email, OLD)).toBe(302);
  });

  it("a connection's passwordPolicy and password_history refuse weak and recent passwords", async () => {
    const t = await createTenant();
    await createConnection(t, "Strict", "auth0", { passwordPolicy: "good", password_history: { enable: true, size: 2 } });
    const app = await seedClient(t, { callbacks: [CALLBACK] });
    const email = newEmail();
    expect((await api(t, "POST", "/users", { connection: "Strict", email, password: "First-pass-1" })).status).toBe(201);
    const reset = async (password: string) => {
      expect((await changePassword({ client_id: app.client_id, email, connection: "Strict" }, t)).status).toBe(200);
      return setPassword(await resetLink(email, t), password, password, t);
    };
    const weak = await reset("alllowercase");
    expect(errorCodeOf(await weak.text())).toBe("PASSWORD_TOO_WEAK");
    expect((await reset("Second-pass-2")).status).toBe(200);
    const recent = await reset("First-pass-1");
    expect(recent.status).toBe(400);
    expect(errorCodeOf(await recent.text())).toBe("PASSWORD_HISTORY_ERROR");
    expect((await reset("Third-pass-3")).status).toBe(200);
  });

  it("ends every session and refresh token of the user", async () => {
    const s = await refreshSetup(tenant, {}, {});
    const { refresh_token } = await loginOffline(s);
    expect(refresh_token).toBeTruthy();
    const other = await sessionCookie(tenant, s.user.user_id, s.client.client_id);
    const sessionsOf = async () => ((await (await api(tenant, "GET", `/users/${encodeURIComponent(s.user.user_id)}/sessions?take=10`)).json()) as { sessions: unknown[] }).sessions;
    expect((await sessionsOf()).length).toBe(2);
    const email = ((await (await api(tenant, "GET", `/users/${encodeURIComponent(s.user.user_id)}`)).json()) as { email: string }).email;
    expect((await changePassword({ client_id: client.client_id, email, connection: DB })).status).toBe(200);
    expect((await setPassword(await resetLink(email), NEW)).status).toBe(200);
    await runAlarm(tenant, 2);
    expect(await sessionsOf()).toEqual([]);
    const refreshed = await refreshGrant(tenant, s.client, refresh_token as string);
    expect(refreshed.status).not.toBe(200);
    expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
    // The old browser session no longer logs in silently.
    const silent = await call(`/authorize?${new URLSearchParams({ client_id: s.client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", prompt: "none" })}`, { host: host(), redirect: "manual", headers: { cookie: other } });
    expect(new URL(locationOf(silent)).searchParams.get("error")).toBe("login_required");
  });
});

describe("POST /dbconnections/change_password", () => {
  it("answers the same text for an existing and an unknown address, and only the account gets an email", async () => {
    const email = newEmail();
    await seedUser(tenant, email, OLD);
    const unknown = newEmail();
    const known = await changePassword({ client_id: client.client_id, email, connection: DB });
    const missing = await changePassword({ client_id: client.client_id, email: unknown, connection: DB });
    expect([known.status, missing.status]).toEqual([200, 200]);
    expect([await known.text(), await missing.text()]).toEqual([SENT, SENT]);
    expect(known.headers.get("content-type")).toBe(missing.headers.get("content-type"));
    await resetLink(email);
    expect(await sinkTo(tenant, unknown)).toEqual([]);
    const types = (await logsOf(tenant, "?q=type:fcpr")).map((l) => l.type);
    expect(types).toContain("fcpr");
  });

  it("refuses a bad body, an unknown client and a connection the application does not have with invalid_request", async () => {
    for (const body of [{ email: "a@example.com", connection: DB }, { client_id: client.client_id, email: "a@example.com", connection: "nope" }, { client_id: "unknown", email: "a@example.com", connection: DB }]) {
      const res = await changePassword(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
    }
    const cross = await changePassword({ client_id: client.client_id, email: "a@example.com", connection: DB }, tenant, { origin: "https://evil.example" });
    expect(cross.status).toBe(403);
  });
});

describe("POST /api/v2/tickets/password-change and /tickets/email-verification", () => {
  it("only a token of the tenant with create:user_tickets reaches them", async () => {
    const kit = await reachKit(["create:user_tickets"]);
    const user = await seedUser(kit.tenant, newEmail(), OLD);
    await expectRefusals(kit, "POST", "/tickets/password-change", "create:user_tickets", { user_id: user.user_id });
    await expectRefusals(kit, "POST", "/tickets/email-verification", "create:user_tickets", { user_id: user.user_id });
    const ok = await mgmt("POST", "/tickets/password-change", { token: kit.allowed, headers: { "tenant-id": kit.tenant }, body: { user_id: user.user_id } });
    expect(ok.status).toBe(201);
  });

  it("a password-change ticket sets the password once, marks the email verified and goes to result_url with the email", async () => {
    const email = newEmail();
    const created = await api(tenant, "POST", "/users", { connection: DB, email, password: OLD });
    const user = (await created.json()) as { user_id: string; email_verified: boolean };
    expect(user.email_verified).toBe(false);
    const res = await api(tenant, "POST", "/tickets/password-change", { user_id: user.user_id, result_url: "https://app.example.com/done", mark_email_as_verified: true, includeEmailInRedirect: true, ttl_sec: 600 });
    expect(res.status, await res.clone().text()).toBe(201);
    const { ticket } = (await res.json()) as { ticket: string };
    expect(ticket).toMatch(/\/u2\/reset-password\/change\?ticket=[A-Za-z0-9_-]+/);
    const done = await setPassword(ticket, NEW);
    expect(done.status).toBe(200);
    const back = /href="(https:\/\/app\.example\.com\/done[^"]*)"/.exec(await done.text())?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(new URL(back).searchParams.get("email")).toBe(email);
    expect(new URL(back).searchParams.get("success")).toBe("true");
    expect(((await (await api(tenant, "GET", `/users/${encodeURIComponent(user.user_id)}`)).json()) as { email_verified: boolean }).email_verified).toBe(true);
    expect(await loginStatus(email, NEW)).toBe(302);
    expect((await setPassword(ticket, "another-Pw-9")).status).toBe(400);
  });

  it("finds the user by email and connection_id; ttl_sec bounds the ticket", async () => {
    const email = newEmail();
    await seedUser(tenant, email, OLD);
    const connections = (await (await api(tenant, "GET", `/connections?name=${DB}`)).json()) as Array<{ id: string }>;
    const res = await api(tenant, "POST", "/tickets/password-change", { email, connection_id: connections[0]?.id, ttl_sec: 60 });
    expect(res.status, await res.clone().text()).toBe(201);
    const { ticket } = (await res.json()) as { ticket: string };
    setClock(() => Date.now() + 61_000);
    expect((await setPassword(ticket, NEW)).status).toBe(400);
  });

  it("bad input is a 4xx in the management error shape", async () => {
    const user = await seedUser(tenant, newEmail(), OLD);
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ["/tickets/password-change", {}, 400, "invalid_body"],
      ["/tickets/password-change", { user_id: user.user_id, email: "x@example.com" }, 400, "invalid_body"],
      ["/tickets/password-change", { user_id: user.user_id, result_url: "https://a.example", client_id: client.client_id }, 400, "invalid_body"],
      ["/tickets/password-change", { user_id: user.user_id, ttl_sec: -1 }, 400, "invalid_body"],
      ["/tickets/password-change", { user_id: user.user_id, unknown_field: 1 }, 400, "invalid_body"],
      ["/tickets/password-change", { user_id: "auth0|nobody" }, 404, "inexistent_user"],
      ["/tickets/password-change", { user_id: user.user_id, client_id: "nope" }, 404, "inexistent_client"],
      ["/tickets/password-change", { email: "x@example.com", connection_id: "con_nope" }, 404, "inexistent_connection"],
      ["/tickets/email-verification", {}, 400, "invalid_body"],
      ["/tickets/email-verification", { user_id: user.user_id, result_url: "javascript:alert(1)" }, 400, "invalid_body"],
      ["/tickets/email-verification", { user_id: "auth0|nobody" }, 404, "inexistent_user"],
    ];
    for (const [path, body, status, errorCode] of cases) {
      const res = await api(tenant, "POST", path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(status);
      const problem = (await res.json()) as { statusCode: number; errorCode: string; message: string };
      expect(problem).toMatchObject({ statusCode: status, errorCode });
      expect(problem.message).toBeTruthy();
    }
  });

  it("an email-verification ticket verifies once and redirects to result_url", async () => {
    const email = newEmail();
    const user = (await (await api(tenant, "POST", "/users", { connection: DB, email, password: OLD })).json()) as { user_id: string };
    const res = await api(tenant, "POST", "/tickets/email-verification", { user_id: user.user_id, result_url: "https://app.example.com/verified", includeEmailInRedirect: true });
    expect(res.status, await res.clone().text()).toBe(201);
    const { ticket } = (await res.json()) as { ticket: string };
    const first = await call(pathOf(ticket), { redirect: "manual" });
    expect(first.status).toBe(302);
    const to = new URL(first.headers.get("location") ?? "");
    expect(to.origin + to.pathname).toBe("https://app.example.com/verified");
    expect(to.searchParams.get("email")).toBe(email);
    expect(((await (await api(tenant, "GET", `/users/${encodeURIComponent(user.user_id)}`)).json()) as { email_verified: boolean }).email_verified).toBe(true);
    expect((await call(pathOf(ticket), { redirect: "manual" })).status).toBe(400);
  });
});
