import { describe, expect, it } from "vitest";
import { call, createTenant } from "../helpers/api";
import { seedClient, seedUser } from "../helpers/flows";
import { runAlarm, sinkTo } from "../helpers/jobs";
import { TestBrowser } from "../helpers/mfa";
import { expectRefusals, reachKit } from "../helpers/route-reach";
import { createOrg, freshTenant } from "../helpers/organizations";
import { api, DB } from "../helpers/users";

/**
 * Issue 29 point 4: `/api/v2/email-templates` in the reference platform's shapes, the Liquid sandbox (no
 * files, bounded loops and output: a 400, never a 5xx), and the emails Gatehouse sends rendered from the
 * tenant's template, read back from the development sink.
 */

const newEmail = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const template = (name: string, extra: Record<string, unknown> = {}) => ({
  template: name,
  body: "<p>Hello {{ user.email }}</p>",
  from: "Support <support@example.com>",
  subject: "Hi from {{ application.name }}",
  syntax: "liquid",
  enabled: true,
  ...extra,
});

describe("email template management", () => {
  it("POST creates (200, the stored shape), a second POST is 409, GET reads it, PATCH and PUT change it", async () => {
    const t = await createTenant();
    const missing = await api(t, "GET", "/email-templates/verify_email");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, errorCode: "inexistent_email_template" });

    const body = template("verify_email", { resultUrl: "https://app.example.com/verified", urlLifetimeInSeconds: 3600, includeEmailInRedirect: false });
    const created = await api(t, "POST", "/email-templates", body);
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual(body);
    const again = await api(t, "POST", "/email-templates", body);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ statusCode: 409, error: "Conflict", message: "Template verify_email already exists." });
    expect(await (await api(t, "GET", "/email-templates/verify_email")).json()).toEqual(body);

    const patched = await api(t, "PATCH", "/email-templates/verify_email", { subject: "Verify, {{ user.email }}", enabled: false, resultUrl: null });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toEqual({ ...body, subject: "Verify, {{ user.email }}", enabled: false, resultUrl: null });

    // PUT replaces the whole template: fields it leaves out are gone.
    const put = await api(t, "PUT", "/email-templates/verify_email", { template: "verify_email", body: "<b>x</b>", enabled: true });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ template: "verify_email", body: "<b>x</b>", enabled: true, syntax: "liquid" });
    expect(await (await api(t, "GET", "/email-templates/verify_email")).json()).toEqual({ template: "verify_email", body: "<b>x</b>", enabled: true, syntax: "liquid" });

    // PUT creates a template never created; PATCH does not.
    expect((await api(t, "PUT", "/email-templates/welcome_email", template("welcome_email"))).status).toBe(200);
    expect((await api(t, "PATCH", "/email-templates/blocked_account", { enabled: true })).status).toBe(404);
    expect((await api(t, "GET", "/email-templates/blocked_account")).status).toBe(404);
  });

  it("every reference template name is accepted", async () => {
    const t = await createTenant();
    for (const name of ["verify_email", "verify_email_by_code", "reset_email", "reset_email_by_code", "welcome_email", "blocked_account", "stolen_credentials", "enrollment_email", "mfa_oob_code", "user_invitation", "change_password", "password_reset", "async_approval"]) {
      expect((await api(t, "POST", "/email-templates", template(name))).status, name).toBe(200);
      expect(((await (await api(t, "GET", `/email-templates/${name}`)).json()) as { template: string }).template).toBe(name);
    }
  });

  it("bad input is a 400 in the reference shape and writes nothing", async () => {
    const t = await createTenant();
    for (const body of [
      template("not_a_template"),
      { body: "<p>no name</p>" },
      template("reset_email", { syntax: "handlebars" }),
      template("reset_email", { urlLifetimeInSeconds: "3600" }),
      template("reset_email", { urlLifetimeInSeconds: -1 }),
      template("reset_email", { resultUrl: "javascript:alert(1)" }),
      template("reset_email", { enabled: "yes" }),
      template("reset_email", { unknown: 1 }),
      template("reset_email", { body: "x".repeat(100_001) }),
      "{not json",
    ]) {
      const res = await api(t, "POST", "/email-templates", body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, error: "Bad Request" });
    }
    expect((await api(t, "GET", "/email-templates/reset_email")).status).toBe(404);
    const unknown = await api(t, "GET", "/email-templates/nope");
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ statusCode: 400, errorCode: "invalid_uri" });
    expect((await api(t, "PATCH", "/email-templates/nope", { enabled: true })).status).toBe(400);
    expect((await api(t, "PUT", "/email-templates/nope", template("reset_email"))).status).toBe(400);
    // The body's template must be the path's.
    expect((await api(t, "PUT", "/email-templates/reset_email", template("verify_email"))).status).toBe(400);
    expect((await api(t, "GET", "/email-templates/reset_email")).status).toBe(404);
  });

  it("Liquid abuse is refused with a 400 naming the property, never a 5xx: files, long loops, megabytes, syntax errors", async () => {
    const t = await createTenant();
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ body: "{% include 'secrets' %}" }, "body", /include tag is not available/],
      [{ body: "{% render '/etc/passwd' %}" }, "body", /render tag is not available/],
      [{ subject: "{% layout 'base' %}" }, "subject", /layout tag is not available/],
      [{ body: "{% for i in (1..100000000) %}x{% endfor %}" }, "body", /limit exceeded/],
      [{ body: "{% for i in (1..1000) %}{% for j in (1..1000) %}xxxxxxxxxx{% endfor %}{% endfor %}" }, "body", /more than 10000 nodes/],
      [{ body: "{% assign s = 'xxxxxxxxxx' %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s }}" }, "body", /limit exceeded/],
      [{ body: "{% capture a %}{% for i in (1..1000) %}{% for j in (1..1000) %}x{% endfor %}{% endfor %}{% endcapture %}" }, "body", /nodes/],
      [{ body: "{% if %}" }, "body", /invalid/],
      [{ from: "{{ user.email | no_such_filter }}" }, "from", /undefined filter/],
    ];
    for (const [fields, property, reason] of cases) {
      const res = await api(t, "POST", "/email-templates", template("reset_email", fields));
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const error = (await res.json()) as { message: string; errorCode: string };
      expect(error.errorCode).toBe("invalid_body");
      expect(error.message).toContain(`on property ${property}`);
      expect(error.message).toMatch(reason);
    }
    expect((await api(t, "GET", "/email-templates/reset_email")).status).toBe(404);
    // The same refusal on PATCH and PUT, the stored template unchanged.
    expect((await api(t, "POST", "/email-templates", template("reset_email"))).status).toBe(200);
    expect((await api(t, "PATCH", "/email-templates/reset_email", { body: "{% include 'x' %}" })).status).toBe(400);
    expect((await api(t, "PUT", "/email-templates/reset_email", template("reset_email", { body: "{% for i in (1..100000000) %}x{% endfor %}" }))).status).toBe(400);
    expect(((await (await api(t, "GET", "/email-templates/reset_email")).json()) as { body: string }).body).toBe("<p>Hello {{ user.email }}</p>");
  });

  it("needs read:, create: or update:email_templates: no token 401; end user, other tenant, revoked token and a missing scope 403", async () => {
    const kit = await reachKit(["read:email_templates", "create:email_templates", "update:email_templates"]);
    const body = template("welcome_email");
    await expectRefusals(kit, "POST", "/email-templates", "create:email_templates", body);
    await expectRefusals(kit, "GET", "/email-templates/welcome_email", "read:email_templates");
    await expectRefusals(kit, "PUT", "/email-templates/welcome_email", "update:email_templates", body);
    await expectRefusals(kit, "PATCH", "/email-templates/welcome_email", "update:email_templates", { enabled: false });
    const as = (method: string, path: string, b?: unknown) => api(kit.tenant, method, path, b, kit.allowed);
    expect((await as("POST", "/email-templates", body)).status).toBe(200);
    expect((await as("GET", "/email-templates/welcome_email")).status).toBe(200);
    expect((await as("PUT", "/email-templates/welcome_email", body)).status).toBe(200);
    expect((await as("PATCH", "/email-templates/welcome_email", { enabled: false })).status).toBe(200);
    // Read alone does not write.
    const reader = await reachKit(["read:email_templates"], kit.tenant);
    expect((await api(kit.tenant, "PATCH", "/email-templates/welcome_email", { enabled: true }, reader.allowed)).status).toBe(403);
  });
});

describe("emails rendered from the tenant's templates", () => {
  it("a reset email: the template's subject, sender, HTML and text with the link; its lifetime and resultUrl apply", async () => {
    const t = await createTenant();
    const client = await seedClient(t, { callbacks: ["https://app.example.com/callback"] });
    const email = newEmail("reset");
    await seedUser(t, email, "p4ssw0rd!");
    const created = await api(t, "POST", "/email-templates", {
      template: "reset_email",
      from: "{{ application.name }} <help@example.com>",
      subject: "Reset for {{ user.email }} at {{ application.name }}",
      body: '<html><body><h1>{{ friendly_name }}</h1><p><a href="{{ url }}">Choose a new password</a></p></body></html>',
      resultUrl: "https://app.example.com/after-reset",
      urlLifetimeInSeconds: 600,
      enabled: true,
    });
    expect(created.status).toBe(200);
    const sent = await call("/dbconnections/change_password", {
      method: "POST",
      host: `${t}.localhost:8787`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, email, connection: DB }),
    });
    expect(sent.status).toBe(200);
    await runAlarm(t);
    const [mail] = await sinkTo(t, email);
    const appName = ((await (await api(t, "GET", `/clients/${client.client_id}`)).json()) as { name: string }).name;
    expect(mail?.subject).toBe(`Reset for ${email} at ${appName}`);
    expect(mail?.from).toBe(`${appName} <help@example.com>`);
    const html = (mail as { html?: string }).html ?? "";
    expect(html).toContain(`<h1>${t}</h1>`);
    const link = /href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(link).toMatch(/\/u2\/reset-password\/change\?/);
    expect(mail?.text).toContain(`Choose a new password (${link})`);
    const ticket = new URL(link).searchParams.get("ticket") as string;
    const done = await new TestBrowser(`${t}.localhost:8787`).post("/u2/reset-password/change", { ticket, password: "n3w-Passw0rd!", password_confirm: "n3w-Passw0rd!" });
    expect(done.status).toBe(200);
    const page = await done.text();
    expect(page).toContain("https://app.example.com/after-reset?");
  });

  it("a disabled template sends the built-in email instead", async () => {
    const t = await createTenant();
    const client = await seedClient(t, {});
    const email = newEmail("disabled");
    await seedUser(t, email, "p4ssw0rd!");
    expect((await api(t, "POST", "/email-templates", template("reset_email", { enabled: false, subject: "CUSTOM" }))).status).toBe(200);
    const body = JSON.stringify({ client_id: client.client_id, email, connection: DB });
    await call("/dbconnections/change_password", { method: "POST", host: `${t}.localhost:8787`, headers: { "content-type": "application/json" }, body });
    await runAlarm(t);
    const [mail] = await sinkTo(t, email);
    expect(mail?.subject).toBe("Reset your password");
    expect(mail?.text).toContain("/u2/reset-password/change?");
  });

  it("a verification email: user values HTML-escaped in the body, the link verifies, resultUrl is where it goes", async () => {
    const t = await createTenant();
    const email = newEmail("verify");
    const user = (await (await api(t, "POST", "/users", { connection: DB, email, password: "Sufficient-Pw-1", name: '<img src=x onerror="alert(1)">' })).json()) as { user_id: string };
    const created = await api(t, "POST", "/email-templates", {
      template: "verify_email",
      from: "verify@example.com",
      subject: "Verify {{ user.email }}",
      body: '<p>Hi {{ user.name }}</p><p><a href="{{ url }}">Verify</a> ({{ connection.name }})</p>',
      resultUrl: "https://app.example.com/verified",
      enabled: true,
    });
    expect(created.status).toBe(200);
    expect((await api(t, "POST", "/jobs/verification-email", { user_id: user.user_id })).status).toBe(201);
    await runAlarm(t);
    const [mail] = await sinkTo(t, email);
    expect(mail?.subject).toBe(`Verify ${email}`);
    expect(mail?.from).toBe("verify@example.com");
    const html = (mail as { html?: string }).html ?? "";
    expect(html).toContain("Hi &lt;img src=x onerror=&#34;alert(1)&#34;&gt;");
    expect(html).not.toContain("<img");
    expect(html).toContain(`(${DB})`);
    const link = (/href="([^"]+)"/.exec(html)?.[1] ?? "").replaceAll("&amp;", "&");
    const followed = await call(new URL(link).pathname + new URL(link).search, { redirect: "manual" });
    expect(followed.status).toBe(302);
    expect(followed.headers.get("location")).toMatch(/^https:\/\/app\.example\.com\/verified\?/);
    const after = (await (await api(t, "GET", `/users/${encodeURIComponent(user.user_id)}`)).json()) as { email_verified: boolean };
    expect(after.email_verified).toBe(true);
  });

  it("an organization invitation: inviter, organization and the invitation's url from the user_invitation template", async () => {
    const { tenantId } = await freshTenant();
    const org = await createOrg(tenantId, { display_name: "Acme & Co" });
    const client = await seedClient(tenantId);
    const invitee = newEmail("invited");
    const created = await api(tenantId, "POST", "/email-templates", {
      template: "user_invitation",
      subject: "{{ inviter.name }} invites you to {{ organization.display_name }}",
      body: '<p>{{ inviter.name }} invited {{ user.email }} to {{ organization.display_name }} ({{ organization.name }}).</p><a href="{{ url }}">Join</a>',
      enabled: true,
    });
    expect(created.status).toBe(200);
    const invited = await api(tenantId, "POST", `/organizations/${org.id}/invitations`, { inviter: { name: "Ann <admin>" }, invitee: { email: invitee }, client_id: client.client_id });
    expect(invited.status).toBe(201);
    const { invitation_url } = (await invited.json()) as { invitation_url: string };
    const [mail] = await sinkTo(tenantId, invitee);
    expect(mail?.subject).toBe("Ann <admin> invites you to Acme & Co");
    const html = (mail as { html?: string }).html ?? "";
    expect(html).toContain(`<p>Ann &lt;admin&gt; invited ${invitee} to Acme &amp; Co (${org.name}).</p>`);
    expect(html).toContain(`<a href="${invitation_url.replaceAll("&", "&amp;")}">Join</a>`);
    expect(mail?.text).toContain(`Join (${invitation_url})`);
  });

  it("a welcome email after sign-up only while the welcome_email template is enabled (no built-in welcome)", async () => {
    const t = await createTenant();
    const client = await seedClient(t, {});
    const signup = (email: string) =>
      call("/dbconnections/signup", {
        method: "POST",
        host: `${t}.localhost:8787`,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_id: client.client_id, email, password: "p4ssw0rd!long", connection: DB }),
      });
    const before = newEmail("nowelcome");
    expect((await signup(before)).status).toBe(200);
    expect(await sinkTo(t, before)).toEqual([]);
    expect((await api(t, "POST", "/email-templates", template("welcome_email", { subject: "Welcome to {{ application.name }}", body: "<p>Welcome, {{ user.email }}</p>" }))).status).toBe(200);
    const welcomed = newEmail("welcome");
    expect((await signup(welcomed)).status).toBe(200);
    const [mail] = await sinkTo(t, welcomed);
    expect(mail?.subject).toMatch(/^Welcome to /);
    expect((mail as { html?: string }).html).toBe(`<p>Welcome, ${welcomed}</p>`);
    expect((await api(t, "PATCH", "/email-templates/welcome_email", { enabled: false })).status).toBe(200);
    const disabled = newEmail("disabledwelcome");
    expect((await signup(disabled)).status).toBe(200);
    expect(await sinkTo(t, disabled)).toEqual([]);
  });
});
