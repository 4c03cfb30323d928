import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeResults, launchChromium, newRecordedContext, screenshot } from "./helpers/browser";
import { type StartedScript, startScript } from "./helpers/start-script";

/**
 * The admin console in Chromium against the real `npm start` (issue 30): the banner names the console and
 * the admin login; a person logs in through Gatehouse's own login page, creates a tenant, an application and
 * a user, and edits an action's code in CodeMirror; axe finds no violation on any screen.
 */
const ADMIN = { email: "console-admin@example.com", password: "a long console password for e2e" };

let started: StartedScript;
let localDir: string;
let browser: Browser;

beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "gatehouse-console-"));
  await writeFile(join(localDir, ".dev.vars"), `ADMIN_EMAIL=${ADMIN.email}\nADMIN_PASSWORD=${ADMIN.password}\n`);
  started = await startScript([], {}, { localDir });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await started?.stop();
  await rm(localDir, { recursive: true, force: true });
});

/** axe on the page as it is: no violation at all (every rule axe runs by default, WCAG A and AA included). */
async function expectAccessible(page: Page, name: string): Promise<void> {
  await screenshot(page, `console-${name}.png`);
  const results = await axeResults(page);
  const found = results.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
  expect(found, name).toEqual([]);
}

/** Gatehouse's own login page (the control plane's or a tenant's): fill it and continue. */
async function fillLogin(page: Page, email: string, password: string): Promise<void> {
  await page.waitForURL(/\/u2\/login/);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: /continue|log in/i }).click();
}

describe("admin console in Chromium (issue 30)", () => {
  it("npm start prints the console URL and the admin login", () => {
    expect(started.field("Admin console:")).toBe(`http://localhost:${started.port}/admin`);
    expect(started.field("Admin login:")).toContain(ADMIN.email);
    expect(started.output()).not.toContain(ADMIN.password);
  });

  it("an admin logs in, creates a tenant, an application and a user, edits, test-runs, deploys and binds an action; axe finds nothing", async () => {
    const base = `http://localhost:${started.port}`;
    const { context, page, log } = await newRecordedContext(browser);
    try {
      await page.goto(`${base}/admin`);
      // Gatehouse's own login page (the control plane's), then back to the console.
      await page.waitForURL(/\/u2\/login/);
      await page.getByLabel("Email").fill(ADMIN.email);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: /continue|log in/i }).click();
      await page.waitForURL(`${base}/admin/tenants`);
      await page.getByRole("heading", { level: 1, name: "Tenants" }).waitFor();
      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === "gh_console");
      expect(session?.httpOnly).toBe(true);
      expect(session?.sameSite).toBe("Lax");
      await expectAccessible(page, "tenants");

      const tenant = `console-${Date.now().toString(36)}`;
      await page.getByLabel("Tenant id").fill(tenant);
      await page.getByLabel("Display name").fill("Console e2e");
      await page.getByRole("button", { name: "Create tenant" }).click();
      await page.waitForURL(`${base}/admin/t/${tenant}/applications`);
      await expectAccessible(page, "applications");

      await page.getByLabel("Name").fill("Console web app");
      await page.getByLabel("Type").selectOption("regular_web");
      await page.getByLabel("Allowed callback URLs").fill("https://app.example.com/callback");
      await page.getByRole("button", { name: "Create application" }).click();
      await page.getByRole("heading", { level: 1, name: "Console web app" }).waitFor();
      const secret = (await page.locator(".secret").textContent()) ?? "";
      expect(secret.length).toBeGreaterThan(20);
      await page.getByText("Show the API calls of this page").click();
      expect(await page.locator("details.calls pre").first().textContent()).toContain("Bearer $TOKEN");
      await expectAccessible(page, "application");

      await page.getByRole("link", { name: "Users" }).click();
      await page.waitForURL(`${base}/admin/t/${tenant}/users`);
      await expectAccessible(page, "users");
      await page.getByLabel("Email").fill("ann@example.com");
      await page.getByLabel("Password").fill("Ann's strong passw0rd!");
      await page.getByRole("button", { name: "Create user" }).click();
      await page.getByRole("heading", { level: 1, name: "ann@example.com" }).waitFor();
      await expectAccessible(page, "user");

      for (const section of ["APIs", "Roles", "Organizations", "Connections", "Logs"]) {
        await page.getByRole("link", { name: section, exact: true }).click();
        await page.getByRole("heading", { level: 1, name: section }).waitFor();
        await expectAccessible(page, section.toLowerCase());
      }

      // The action editor: CodeMirror replaces the textarea (its script from the static assets).
      await page.getByRole("link", { name: "Actions", exact: true }).click();
      await page.getByLabel("Name").fill("Add plan claim");
      await page.getByRole("button", { name: "Create action" }).click();
      await page.locator(".cm-editor").waitFor();
      expect(await page.locator("textarea[name=code]").isHidden()).toBe(true);
      await page.locator(".cm-content").click();
      await page.keyboard.press("Control+End");
      await page.keyboard.type("\n// edited in the console\n");
      await page.getByRole("button", { name: "Save draft" }).click();
      await page.getByText("Draft saved.").waitFor();
      expect(await page.locator("textarea[name=code]").inputValue()).toContain("// edited in the console");
      // The draft's test run: axe on the action page with its result.
      await page.getByRole("button", { name: "Run the draft" }).click();
      await page.getByRole("heading", { level: 2, name: "Test result" }).waitFor();
      await expectAccessible(page, "action");
      // Deployed, then bound to its trigger on the trigger's bindings screen.
      await page.getByRole("button", { name: "Deploy" }).click();
      await page.getByText("Deployed: the current draft runs from now on.").waitFor();
      await page.goto(`${base}/admin/t/${tenant}/triggers/post-login`);
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.getByRole("button", { name: "Remove: Add plan claim" }).waitFor();
      await expectAccessible(page, "trigger-bindings");

      expect(log.pageErrors).toEqual([]);
      expect(log.consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("home charts, tenant search with recent tenants, logs with filters and an entry's page; axe finds nothing", async () => {
    const base = `http://localhost:${started.port}`;
    const { context, page, log } = await newRecordedContext(browser);
    try {
      await page.goto(`${base}/admin`);
      await page.waitForURL(/\/u2\/login/);
      await page.getByLabel("Email").fill(ADMIN.email);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: /continue|log in/i }).click();
      await page.waitForURL(`${base}/admin/tenants`);
      // The control plane has logins by now (this operator's): its home charts them.
      await page.goto(`${base}/admin/t/control_plane`);
      await page.waitForURL(`${base}/admin/t/control_plane/home`);
      expect(await page.getByRole("img", { name: /Logins per day, last 30 days/ }).count()).toBe(1);
      expect(await page.getByRole("img", { name: /Failed logins per day/ }).count()).toBe(1);
      await page.getByText("The same figures as a table").click();
      expect(await page.locator("tbody th[scope=row]").count()).toBe(30);
      await expectAccessible(page, "home");

      // The switcher: a server-side search, and the tenant just opened among the recent ones.
      await page.getByRole("link", { name: "Switch tenant" }).click();
      await page.getByLabel("Find a tenant").fill("control");
      await page.getByRole("button", { name: "Search" }).click();
      await page.waitForURL(`${base}/admin/tenants?q=control`);
      expect(await page.getByRole("navigation", { name: "Recent tenants" }).getByRole("link", { name: "control_plane" }).count()).toBe(1);
      expect(await page.locator("table tbody tr").count()).toBe(1);
      await expectAccessible(page, "tenant-search");

      // Logs: filtered to successful logins, then one entry's page.
      await page.goto(`${base}/admin/t/control_plane/logs`);
      await page.getByLabel("Type").selectOption("s");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL(/\/logs\?type=s/);
      expect(await page.locator("table tbody tr").count()).toBeGreaterThan(0);
      expect(await page.locator("table tbody abbr").allTextContents()).toEqual(expect.arrayContaining(["s"]));
      await expectAccessible(page, "logs-filtered");
      await page.locator("table tbody tr a").first().click();
      await page.getByRole("heading", { level: 1, name: /^s: / }).waitFor();
      await expectAccessible(page, "log-entry");

      // An API's, a role's and a connection's own pages (the control plane's seeded ones).
      await page.goto(`${base}/admin/t/control_plane/apis`);
      await page.getByRole("link", { name: "Gatehouse Management API" }).click();
      await page.getByRole("heading", { level: 1, name: "Gatehouse Management API" }).waitFor();
      expect(await page.getByLabel("Signing algorithm").inputValue()).toBe("RS256");
      await expectAccessible(page, "api");
      await page.goto(`${base}/admin/t/control_plane/roles`);
      await page.getByRole("link", { name: "Gatehouse Viewer" }).click();
      await page.getByRole("heading", { level: 1, name: "Gatehouse Viewer" }).waitFor();
      expect(await page.getByRole("cell", { name: "read:stats", exact: true }).count()).toBe(1);
      await expectAccessible(page, "role");
      await page.goto(`${base}/admin/t/control_plane/connections`);
      await page.getByRole("link", { name: "Username-Password-Authentication" }).click();
      await page.getByRole("heading", { level: 2, name: "Database settings and password policy" }).waitFor();
      await expectAccessible(page, "connection");

      expect(log.pageErrors).toEqual([]);
      expect(log.consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("an admin creates a role and an organization with an invitation, sees a user's access and history, tries the tenant's login, imports users, edits a webhook and adds a log stream; axe finds nothing", async () => {
    const base = `http://localhost:${started.port}`;
    const { context, page, log } = await newRecordedContext(browser);
    try {
      await page.goto(`${base}/admin/tenants`);
      await fillLogin(page, ADMIN.email, ADMIN.password);
      await page.waitForURL(`${base}/admin/tenants`);
      const tenant = `try-${Date.now().toString(36)}`;
      await page.getByLabel("Tenant id").fill(tenant);
      await page.getByLabel("Display name").fill("Try e2e");
      await page.getByRole("button", { name: "Create tenant" }).click();
      await page.waitForURL(`${base}/admin/t/${tenant}/applications`);

      // A user, and their page with sessions, tokens, MFA, identities, organizations, permissions and history
      // (axe on this page with rows in every section: the Viewer's test below).
      await page.goto(`${base}/admin/t/${tenant}/users`);
      await page.getByLabel("Email").fill("bob@example.com");
      await page.getByLabel("Password").fill("Bob's strong passw0rd!");
      await page.getByRole("button", { name: "Create user" }).click();
      await page.getByRole("heading", { level: 1, name: "bob@example.com" }).waitFor();
      for (const heading of ["Sessions", "Refresh tokens", "Multi-factor authentication", "Linked identities", "Organizations", "Permissions", "Change history"]) {
        expect(await page.getByRole("heading", { level: 2, name: heading, exact: true }).count(), heading).toBe(1);
      }

      // Try login: the test application, the tenant's own login page, the tokens decoded.
      await page.getByRole("link", { name: "Try login" }).click();
      await page.getByRole("button", { name: "Create the test application" }).click();
      await screenshot(page, "console-try-login.png");
      await page.getByRole("link", { name: "Log in as a user of this tenant" }).click();
      await page.waitForURL(new RegExp(`^http://${tenant}\\.localhost:${started.port}/u2/login`));
      await fillLogin(page, "bob@example.com", "Bob's strong passw0rd!");
      await page.waitForURL(new RegExp(`^${base}/admin/t/${tenant}/try-login/callback`));
      await page.getByRole("heading", { level: 1, name: "Try login: the tokens" }).waitFor();
      expect(await page.getByText("ID token verified").count()).toBe(1);
      expect(await page.locator("pre").nth(1).textContent()).toContain('"email": "bob@example.com"');
      expect(await page.content()).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
      await expectAccessible(page, "try-login-tokens");

      // A role, then an organization with an invitation (to the test application), through the console's forms.
      await page.goto(`${base}/admin/t/${tenant}/roles`);
      await page.getByLabel("Name").fill("Support");
      await page.getByLabel("Description").fill("Answers tickets");
      await page.getByRole("button", { name: "Create a role" }).click();
      await page.getByRole("link", { name: "Support" }).click();
      await page.getByRole("heading", { level: 1, name: "Support" }).waitFor();
      expect(await page.getByRole("heading", { level: 2, name: "Change history" }).count()).toBe(1);
      await page.goto(`${base}/admin/t/${tenant}/organizations`);
      await page.getByLabel("Name", { exact: true }).fill("acme");
      await page.getByLabel("Display name").fill("Acme Inc");
      await page.getByRole("button", { name: "Create an organization" }).click();
      await page.getByRole("link", { name: "acme" }).click();
      await page.getByLabel("Invitee email").fill("invitee@example.com");
      await page.getByRole("button", { name: "Send invitation" }).click();
      await page.getByText("Invitation sent to invitee@example.com.").waitFor();
      expect(await page.getByRole("cell", { name: "invitee@example.com" }).count()).toBe(1);

      // A users import (one row fails), its job page until it completes.
      await page.goto(`${base}/admin/t/${tenant}/users`);
      await page.getByRole("link", { name: "Import users from a file" }).click();
      const file = JSON.stringify([{ email: "imported@example.com", name: "Imported" }, { name: "no email" }]);
      await page.getByLabel("Users file (JSON)").setInputFiles({ name: "users.json", mimeType: "application/json", buffer: Buffer.from(file) });
      await page.getByRole("button", { name: "Import users" }).click();
      await page.getByText("Import started").waitFor();
      await screenshot(page, "console-import-job-started.png");
      const jobId = ((await page.getByRole("heading", { level: 1 }).textContent()) ?? "").replace("Job ", "");
      for (let i = 0; i < 40 && !(await page.getByRole("heading", { level: 2, name: "Failed rows" }).count()); i++) {
        await page.waitForTimeout(250);
        await page.goto(`${base}/admin/t/${tenant}/jobs/${jobId}`);
      }
      await page.getByRole("heading", { level: 2, name: "Failed rows" }).waitFor();
      await expectAccessible(page, "import-job-done");

      // A webhook's edit page, then a log stream created and its delete confirmation.
      await page.goto(`${base}/admin/t/${tenant}/webhooks`);
      await page.getByLabel("Name").fill("orders");
      await page.getByLabel("URL").fill("https://hooks.example.com/orders");
      await page.getByRole("button", { name: "Add webhook" }).click();
      await page.getByRole("link", { name: "orders", exact: true }).click();
      await page.getByRole("button", { name: "Save webhook" }).click();
      await page.getByText("Webhook saved.").waitFor();
      await expectAccessible(page, "webhook-edit");
      await page.goto(`${base}/admin/t/${tenant}/log-streams`);
      await page.getByLabel("Endpoint URL").fill("https://logs.example.com/in");
      await page.getByLabel("Authorization header").fill("Bearer e2e-sink-s3cret");
      await page.getByRole("button", { name: "Add log stream" }).click();
      await page.getByText(/Log stream .* added\./).waitFor();
      expect(await page.content()).not.toContain("e2e-sink-s3cret");
      await expectAccessible(page, "log-streams");
      expect(log.pageErrors).toEqual([]);
      expect(log.consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("the tenant configuration screens (branding, attack protection, webhooks, domains, keys, settings); axe finds nothing", async () => {
    const base = `http://localhost:${started.port}`;
    const { context, page, log } = await newRecordedContext(browser);
    try {
      await page.goto(`${base}/admin/t/control_plane/branding`);
      await fillLogin(page, ADMIN.email, ADMIN.password);
      await page.waitForURL(`${base}/admin/t/control_plane/branding`);
      for (const [path, title] of [
        ["branding", "Branding"],
        ["protection", "Attack protection"],
        ["webhooks", "Webhooks"],
        ["domains", "Custom domains"],
        ["keys", "Signing keys"],
        ["settings", "Tenant settings"],
      ]) {
        if (path !== "branding") await page.goto(`${base}/admin/t/control_plane/${path}`);
        await page.getByRole("heading", { level: 1, name: title }).waitFor();
        await expectAccessible(page, path);
        if (path === "keys") expect(await page.getByRole("cell", { name: "Current", exact: true }).count()).toBeGreaterThan(0);
      }
      expect(log.pageErrors).toEqual([]);
      expect(log.consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("a Viewer has no button and a forged POST is refused; a CSRF-less POST and a foreign Origin are refused; an ended session logs in again, back to the page", async () => {
    const base = `http://localhost:${started.port}`;
    const viewer = { email: `viewer-${Date.now().toString(36)}@example.com`, password: "a long viewer password for e2e" };
    const admin = await newRecordedContext(browser);
    const seen = await newRecordedContext(browser);
    try {
      // The admin makes a control-plane user a Viewer, in the console.
      await admin.page.goto(`${base}/admin/t/control_plane/users`);
      await fillLogin(admin.page, ADMIN.email, ADMIN.password);
      await admin.page.waitForURL(`${base}/admin/t/control_plane/users`);
      await admin.page.getByLabel("Email").fill(viewer.email);
      await admin.page.getByLabel("Password").fill(viewer.password);
      await admin.page.getByRole("button", { name: "Create user" }).click();
      await admin.page.getByLabel("Assign a role").selectOption({ label: "Gatehouse Viewer" });
      await admin.page.getByRole("button", { name: "Assign" }).click();
      await admin.page.getByText("Role assigned.").waitFor();
      const userId = (await admin.page.locator("tr", { hasText: "User ID" }).locator("code").textContent()) ?? "";
      const userPage = `${base}/admin/t/control_plane/users/${encodeURIComponent(userId)}`;

      // The admin's own session: a POST without the CSRF token, or from another origin, is refused.
      const csrf = (await admin.page.locator('input[name="csrf"]').first().inputValue()) ?? "";
      expect((await admin.context.request.post(`${userPage}/block`, { form: {}, maxRedirects: 0 })).status()).toBe(403);
      expect((await admin.context.request.post(`${userPage}/block`, { form: { csrf }, headers: { origin: "https://evil.example" }, maxRedirects: 0 })).status()).toBe(403);

      // The Viewer reads the same page: no button but log out; a forged POST with a valid CSRF token is refused by the API.
      await seen.page.goto(userPage);
      await fillLogin(seen.page, viewer.email, viewer.password);
      await seen.page.waitForURL(userPage);
      expect(await seen.page.locator('form[method="post"]').evaluateAll((forms) => forms.map((f) => f.getAttribute("action")))).toEqual(["/admin/logout"]);
      expect(await seen.page.getByRole("button", { name: /block|delete|assign|revoke|remove|reset|unlink/i }).count()).toBe(0);
      const viewerCsrf = await seen.page.locator('input[name="csrf"]').first().inputValue();
      const forged = await seen.context.request.post(`${userPage}/block`, { form: { csrf: viewerCsrf }, headers: { origin: base }, maxRedirects: 0 });
      expect(forged.status()).toBe(403);
      expect(await forged.text()).toContain("update:users");
      await expectAccessible(seen.page, "viewer-user");

      // The Viewer's console session ends (its cookie names a session the server no longer has) and the
      // login session is gone too: the next page is the login form, then that same page again.
      const cookies = await seen.context.cookies(base);
      const consoleCookie = cookies.find((c) => c.name === "gh_console");
      expect(consoleCookie).toBeDefined();
      await seen.context.clearCookies();
      const [userPart] = (consoleCookie?.value ?? "").split(".");
      await seen.context.addCookies([{ ...(consoleCookie as NonNullable<typeof consoleCookie>), value: `${userPart}.${"x".repeat(43)}` }]);
      const deep = `${base}/admin/t/control_plane/logs?type=s`;
      await seen.page.goto(deep);
      await fillLogin(seen.page, viewer.email, viewer.password);
      await seen.page.waitForURL(deep);
      await seen.page.getByRole("heading", { level: 1, name: "Logs" }).waitFor();
      expect(admin.log.pageErrors).toEqual([]);
      expect(seen.log.pageErrors).toEqual([]);
    } finally {
      await admin.context.close();
      await seen.context.close();
    }
  }, 120_000);

  it("a tenant admin logs in through the tenant's organization and sees only that tenant, its details and nothing else; axe finds nothing", async () => {
    const base = `http://localhost:${started.port}`;
    const tokenRes = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: "gatehouse-control-plane", client_secret: started.field("Control-plane client_secret:"), audience: "urn:gatehouse:management" }),
    });
    expect(tokenRes.status).toBe(200);
    const { access_token: token } = (await tokenRes.json()) as { access_token: string };
    const api = async <T>(method: string, path: string, body?: unknown, ok: number[] = [200, 201, 204]): Promise<T> => {
      const res = await fetch(`${base}/api/v2${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
      expect(ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`).toContain(res.status);
      const text = await res.text();
      return (text ? JSON.parse(text) : null) as T;
    };
    // A tenant, its organization on the control plane, and a member holding read:tenants / update:tenants there.
    const tenant = `tadmin-${Date.now().toString(36)}`;
    await api("POST", "/tenants", { id: tenant, name: tenant });
    await api("POST", "/tenants", { id: `${tenant}-other`, name: `${tenant}-other` });
    const org = await api<{ id: string }>("GET", `/organizations/name/${tenant}`);
    const [database] = await api<{ id: string }[]>("GET", "/connections?name=Username-Password-Authentication");
    await api("POST", `/organizations/${org.id}/enabled_connections`, { connection_id: database?.id }, [201, 409]);
    const member = { email: `tenant-admin-${Date.now().toString(36)}@example.com`, password: "a long tenant admin password for e2e" };
    const user = await api<{ user_id: string }>("POST", "/users", { connection: "Username-Password-Authentication", ...member });
    await api("POST", `/organizations/${org.id}/members`, { members: [user.user_id] });
    const role = await api<{ id: string }>("POST", "/roles", { name: `Tenant admin ${tenant}` });
    const permissions = ["read:tenants", "update:tenants"].map((permission_name) => ({ resource_server_identifier: "urn:gatehouse:management", permission_name }));
    await api("POST", `/roles/${role.id}/permissions`, { permissions });
    await api("POST", `/organizations/${org.id}/members/${encodeURIComponent(user.user_id)}/roles`, { roles: [role.id] });

    const { context, page, log } = await newRecordedContext(browser);
    try {
      await page.goto(`${base}/admin/login?${new URLSearchParams({ organization: org.id, return_to: "/admin/tenants" })}`);
      await fillLogin(page, member.email, member.password);
      await page.waitForURL(`${base}/admin/tenants`);
      const table = page.getByRole("table");
      await table.getByRole("link", { name: tenant, exact: true }).waitFor();
      expect(await table.getByRole("link").count()).toBe(1);
      expect(await page.getByRole("button", { name: "Create tenant" }).count()).toBe(0);
      await expectAccessible(page, "tenant-admin-tenants");
      await table.getByRole("link", { name: tenant, exact: true }).click();
      await page.waitForURL(`${base}/admin/t/${tenant}/details`);
      expect(await page.getByRole("navigation", { name: "Tenant" }).getByRole("link").count()).toBe(1);
      await expectAccessible(page, "tenant-admin-details");
      await page.getByLabel("Display name").fill("Renamed by its tenant admin");
      await page.getByRole("button", { name: "Save details" }).click();
      await page.getByText("Details saved.").waitFor();
      expect((await api<{ friendly_name: string }>("GET", `/tenants/${tenant}`)).friendly_name).toBe("Renamed by its tenant admin");
      // Another tenant is the API's to refuse.
      const other = await page.goto(`${base}/admin/t/${tenant}-other/details`);
      expect(other?.status()).toBe(403);
      await page.getByText("it is not the tenant of the token").waitFor();
      expect(log.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
