import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant } from "../helpers/api";
import { pendingLogin, seedClient, type TestClient } from "../helpers/flows";
import { runAlarm, sinkTo } from "../helpers/jobs";
import { csrfOf } from "../helpers/mfa";
import { api, DB } from "../helpers/users";

/**
 * Issue 29 point 2: the built-in emails in the user's language (the login's when one sent it, else the user's
 * own from user_metadata, else the tenant's default), `request_language` for tenant templates, and the page
 * an email's link opens in the language of the email.
 */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let client: TestClient;
const host = () => `${tenant}.localhost:8787`;
const newEmail = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

beforeAll(async () => {
  tenant = await createTenant();
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  expect((await api(tenant, "PATCH", `/clients/${client.client_id}`, { name: "Acme Notes" })).status).toBe(200);
});

async function newUser(email: string, user_metadata: Record<string, string> = {}) {
  const res = await api(tenant, "POST", "/users", { connection: DB, email, password: "Sufficient-Pw-1", user_metadata });
  expect(res.status).toBe(201);
  return (await res.json()) as { user_id: string };
}

/** "Forgot password?" on the login page of a login with these authorize parameters and browser language. */
async function forgotFromLogin(email: string, request: Record<string, string>, acceptLanguage: string) {
  const login = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK, ...request });
  const headers = { "accept-language": acceptLanguage };
  const form = await (await call(`/u2/reset-password?state=${login.state}`, { host: host(), headers: { ...headers, cookie: `gh_csrf=${login.csrf}` } })).text();
  const sent = await call(`/u2/reset-password?state=${login.state}`, {
    method: "POST",
    host: host(),
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded", cookie: `gh_csrf=${login.csrf}` },
    body: new URLSearchParams({ _csrf: csrfOf(form), email }).toString(),
  });
  expect(sent.status).toBe(200);
  await runAlarm(tenant);
  const [mail] = await sinkTo(tenant, email);
  return mail as { subject: string; text: string };
}

const linkIn = (text: string) => {
  const link = /https?:\/\/\S+\/u2\/reset-password\/change\?\S+/.exec(text)?.[0] ?? "";
  return new URL(link).pathname + new URL(link).search;
};

describe("emails in the user's language", () => {
  it("a reset asked from a French login is a French email, and its link opens a French page whatever the browser says", async () => {
    const email = newEmail("fr-reset");
    await newUser(email, { language: "de" });
    const mail = await forgotFromLogin(email, { ui_locales: "fr" }, "de");
    expect(mail.subject).toBe("Réinitialisez votre mot de passe");
    expect(mail.text).toContain("votre compte Acme Notes");
    const page = await call(linkIn(mail.text), { host: host(), headers: { "accept-language": "de" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/^<!doctype html><html lang="fr" dir="ltr">/);
  });

  it("the login's language is the browser's when the login names none; Arabic", async () => {
    const email = newEmail("ar-reset");
    await newUser(email);
    const mail = await forgotFromLogin(email, {}, "ar, en;q=0.5");
    expect(mail.subject).toBe("إعادة تعيين كلمة المرور");
    expect(mail.text).toContain("Acme Notes");
  });

  it("outside a login: the user's user_metadata language, else the tenant's default (English)", async () => {
    const german = newEmail("de-api");
    await newUser(german, { language: "de" });
    const plain = newEmail("default-api");
    await newUser(plain);
    for (const email of [german, plain]) {
      const res = await call("/dbconnections/change_password", {
        method: "POST",
        host: host(),
        headers: { "content-type": "application/json", "accept-language": "ja" },
        body: JSON.stringify({ client_id: client.client_id, email, connection: DB }),
      });
      expect(res.status).toBe(200);
    }
    await runAlarm(tenant);
    expect((await sinkTo(tenant, german))[0]?.subject).toBe("Passwort zurücksetzen");
    expect((await sinkTo(tenant, plain))[0]?.subject).toBe("Reset your password");
    // The verification email sent by the management API follows user_metadata.locale too.
    const spanish = newEmail("es-verify");
    const user = await newUser(spanish, { locale: "es-MX" });
    expect((await api(tenant, "POST", "/jobs/verification-email", { user_id: user.user_id, client_id: client.client_id })).status).toBe(201);
    await runAlarm(tenant);
    const [mail] = await sinkTo(tenant, spanish);
    expect(mail?.subject).toBe("Verifica tu correo electrónico");
    expect(mail?.text).toContain("Acme Notes");
    // Its link opens the page in the user's language too, whatever the browser says.
    const link = /https?:\/\/\S+/.exec(mail?.text ?? "")?.[0] ?? "";
    const page = await call(new URL(link).pathname + new URL(link).search, { host: host(), headers: { "accept-language": "de" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/^<!doctype html><html lang="es" dir="ltr">/);
  });

  it("a passwordless code asked on a Japanese login page comes in Japanese; /passwordless/start follows authParams.ui_locales", async () => {
    const created = await api(tenant, "POST", "/connections", { name: "email", strategy: "email" });
    expect(created.status).toBe(201);
    const app = await seedClient(tenant, { callbacks: [CALLBACK] });
    expect((await api(tenant, "PATCH", `/clients/${app.client_id}`, { name: "Acme Notes" })).status).toBe(200);
    expect((await api(tenant, "PATCH", `/clients/${app.client_id}/connections`, [((await created.json()) as { id: string }).id])).status).toBe(200);
    const to = newEmail("ja-code");
    const login = await pendingLogin(tenant, app.client_id, { redirect_uri: CALLBACK, connection: "email" });
    const headers = { "accept-language": "ja", cookie: login.cookie };
    const form = await (await call(`/u2/passwordless?state=${login.state}&connection=email`, { host: host(), headers })).text();
    const asked = await call(`/u2/passwordless?state=${login.state}&connection=email`, {
      method: "POST",
      host: host(),
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrfOf(form), email: to }).toString(),
    });
    expect(asked.status).toBe(200);
    const [mail] = await sinkTo(tenant, to);
    expect(mail?.subject).toBe("Acme Notes の確認コード");
    expect(mail?.text).toMatch(/^Acme Notes の確認コードは \d{6} です。/);
    const other = newEmail("pt-code");
    const started = await call("/passwordless/start", {
      method: "POST",
      host: host(),
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret, connection: "email", email: other, send: "code", authParams: { ui_locales: "pt-BR" } }),
    });
    expect(started.status, await started.clone().text()).toBe(200);
    expect((await sinkTo(tenant, other))[0]?.text).toMatch(/^\d{6} é seu código de verificação para Acme Notes\./);
  });

  it("a tenant template branches on request_language and reads user.user_metadata", async () => {
    const t = await createTenant();
    const app = await seedClient(t, { callbacks: [CALLBACK] });
    const created = await api(t, "POST", "/email-templates", {
      template: "reset_email",
      from: "reset@example.com",
      subject: "{% if request_language == 'fr' %}Mot de passe{% else %}Password{% endif %} ({{ request_language }})",
      body: '<p>{{ user.user_metadata.nickname_for_mail }}</p><p><a href="{{ url }}">go</a></p>',
      enabled: true,
    });
    expect(created.status).toBe(200);
    const email = newEmail("template");
    expect((await api(t, "POST", "/users", { connection: DB, email, password: "Sufficient-Pw-1", user_metadata: { nickname_for_mail: "Zed" } })).status).toBe(201);
    const login = await pendingLogin(t, app.client_id, { redirect_uri: CALLBACK, ui_locales: "fr-CA" });
    const th = `${t}.localhost:8787`;
    const form = await (await call(`/u2/reset-password?state=${login.state}`, { host: th, headers: { cookie: login.cookie } })).text();
    const sent = await call(`/u2/reset-password?state=${login.state}`, {
      method: "POST",
      host: th,
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: login.cookie },
      body: new URLSearchParams({ _csrf: csrfOf(form), email }).toString(),
    });
    expect(sent.status).toBe(200);
    await runAlarm(t);
    const [mail] = await sinkTo(t, email);
    expect(mail?.subject).toBe("Mot de passe (fr)");
    expect((mail as { html?: string }).html).toContain("<p>Zed</p>");
  });
});

describe("invitation and enrollment emails in the user's language (issue 29 point 4: every email)", () => {
  it("an organization invitation carrying the invitee's user_metadata language is in that language, link and expiry included", async () => {
    const org = (await (await api(tenant, "POST", "/organizations", { name: `acme-${crypto.randomUUID().slice(0, 8)}`, display_name: "Acme Team" })).json()) as { id: string };
    const email = newEmail("fr-invite");
    const res = await api(tenant, "POST", `/organizations/${org.id}/invitations`, { inviter: { name: "Ops" }, invitee: { email }, client_id: client.client_id, user_metadata: { language: "fr" } });
    expect(res.status).toBe(201);
    const { invitation_url } = (await res.json()) as { invitation_url: string };
    const [mail] = await sinkTo(tenant, email);
    expect(mail?.subject).toBe("Ops vous invite à rejoindre Acme Team");
    expect(mail?.text).toContain("Accepter l’invitation");
    expect(mail?.text).toContain(invitation_url);
    expect(mail?.html).toContain(`<a href="${invitation_url.replaceAll("&", "&amp;")}">`);
    // Without a language for the invitee: the tenant's default (English).
    const other = newEmail("en-invite");
    expect((await api(tenant, "POST", `/organizations/${org.id}/invitations`, { inviter: { name: "Ops" }, invitee: { email: other }, client_id: client.client_id })).status).toBe(201);
    expect((await sinkTo(tenant, other))[0]?.subject).toBe("Ops has invited you to join Acme Team");
  });

  it("a multi-factor enrollment ticket sent by email is in the user's own language", async () => {
    expect((await api(tenant, "PUT", "/guardian/factors/otp", { enabled: true })).status).toBe(200);
    const email = newEmail("de-enroll");
    const user = await newUser(email, { language: "de" });
    const res = await api(tenant, "POST", "/guardian/enrollments/ticket", { user_id: user.user_id, send_mail: true });
    expect(res.status).toBe(200);
    const { ticket_url } = (await res.json()) as { ticket_url: string };
    const [mail] = await sinkTo(tenant, email);
    expect(mail?.subject).toBe("Mehrstufige Authentifizierung einrichten");
    expect(mail?.text).toContain(ticket_url);
  });
});
