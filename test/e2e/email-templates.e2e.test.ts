import { randomBytes } from "node:crypto";
import type { ManagementClient } from "auth0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { tenantAdmin, tenantServer } from "./helpers/tenant-server";

/**
 * Issue 29 point 4 against `wrangler dev` with the reference platform's SDK (`auth0` 7, `emailTemplates`):
 * create, read, replace and patch a template, the SDK's errors for a duplicate and a template never
 * created, a Liquid include refused; then the reset email a user asks for arrives in the development sink
 * rendered from the template. The templates are a tenant's own (helpers/tenant-server.ts, on the shared server).
 */

const random = () => randomBytes(6).toString("hex");
const DB = "Username-Password-Authentication";

describe("email templates through the auth0 SDK", () => {
  let server: RunningServer;
  let admin: ManagementClient;

  beforeAll(async () => {
    server = await tenantServer(await startServer({ shareable: true, vars: { DEV_MESSAGE_SINK: "1" } }), "email-templates");
    admin = tenantAdmin(server);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  it("create, get, set and update a template; 409 on a duplicate, 404 before creation, 400 for a file include", async () => {
    await expect(admin.emailTemplates.get("welcome_email")).rejects.toMatchObject({ statusCode: 404 });
    const created = await admin.emailTemplates.create({
      template: "welcome_email",
      body: "<p>Welcome {{ user.email }}</p>",
      from: "hello@example.com",
      subject: "Welcome to {{ application.name }}",
      syntax: "liquid",
      enabled: true,
    });
    expect(created).toMatchObject({ template: "welcome_email", subject: "Welcome to {{ application.name }}", syntax: "liquid", enabled: true });
    await expect(admin.emailTemplates.create({ template: "welcome_email", body: "x" })).rejects.toMatchObject({ statusCode: 409 });
    expect(await admin.emailTemplates.get("welcome_email")).toMatchObject({ body: "<p>Welcome {{ user.email }}</p>", from: "hello@example.com" });
    const patched = await admin.emailTemplates.update("welcome_email", { enabled: false, urlLifetimeInSeconds: 3600 });
    expect(patched).toMatchObject({ enabled: false, urlLifetimeInSeconds: 3600, subject: "Welcome to {{ application.name }}" });
    const replaced = await admin.emailTemplates.set("welcome_email", { template: "welcome_email", body: "<p>Hi</p>", enabled: true });
    expect(replaced).toEqual({ template: "welcome_email", body: "<p>Hi</p>", enabled: true, syntax: "liquid" });
    await expect(admin.emailTemplates.update("welcome_email", { body: "{% include 'secrets' %}" })).rejects.toMatchObject({ statusCode: 400 });
  }, 60_000);

  it("the reset email a user asks for is rendered from the reset_email template", async () => {
    const app = await admin.clients.create({ name: "Templated App", app_type: "regular_web", callbacks: ["https://app.example.com/cb"], grant_types: ["authorization_code"] });
    const email = `templated-${random()}@example.com`;
    await admin.users.create({ connection: DB, email, password: `Some-Horse-${random()}`, email_verified: true });
    await admin.emailTemplates.create({
      template: "reset_email",
      body: '<p>{{ application.name }}: <a href="{{ url }}">reset the password of {{ user.email }}</a></p>',
      from: "Help <help@example.com>",
      subject: "{{ application.name }} password reset",
      enabled: true,
    });
    const asked = await fetch(`${server.baseUrl}/dbconnections/change_password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.client_id, email, connection: DB }),
    });
    expect(asked.status).toBe(200);
    let mail: { subject: string | null; from?: string; html?: string; text: string } | undefined;
    for (let i = 0; i < 50 && !mail; i++) {
      const res = await fetch(`${server.baseUrl}/__dev/messages?to=${encodeURIComponent(email)}`);
      mail = ((await res.json()) as { messages: NonNullable<typeof mail>[] }).messages[0];
      if (!mail) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(mail?.subject).toBe("Templated App password reset");
    expect(mail?.from).toBe("Help <help@example.com>");
    expect(mail?.html).toMatch(/<a href="http[^"]+\/u2\/reset-password\/change\?ticket=[^"]+">reset the password of templated-/);
    expect(mail?.text).toContain("/u2/reset-password/change?ticket=");
  }, 60_000);
});
