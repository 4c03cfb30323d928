import AxeBuilder from "@axe-core/playwright";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, newRecordedContext, screenshot } from "./helpers/browser";
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
  const results = await new AxeBuilder({ page }).analyze();
  const found = results.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
  expect(found, name).toEqual([]);
}

describe("admin console in Chromium (issue 30)", () => {
  it("npm start prints the console URL and the admin login", () => {
    expect(started.field("Admin console:")).toBe(`http://localhost:${started.port}/admin`);
    expect(started.field("Admin login:")).toContain(ADMIN.email);
    expect(started.output()).not.toContain(ADMIN.password);
  });

  it("an admin logs in, creates a tenant, an application and a user, and edits an action; axe finds nothing", async () => {
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
      await expect(page.getByRole("heading", { level: 1, name: "Tenants" }).isVisible()).resolves.toBe(true);
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
      await expect(page.getByRole("heading", { level: 1, name: "Console web app" }).isVisible()).resolves.toBe(true);
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
      await expect(page.getByRole("heading", { level: 1, name: "ann@example.com" }).isVisible()).resolves.toBe(true);
      await expectAccessible(page, "user");

      for (const section of ["APIs", "Roles", "Organizations", "Connections", "Logs"]) {
        await page.getByRole("link", { name: section, exact: true }).click();
        await expect(page.getByRole("heading", { level: 1, name: section }).isVisible()).resolves.toBe(true);
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
      await expect(page.getByText("Draft saved.").isVisible()).resolves.toBe(true);
      expect(await page.locator("textarea[name=code]").inputValue()).toContain("// edited in the console");
      await expectAccessible(page, "action");

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
      await expect(page.getByRole("heading", { level: 1, name: /^s: / }).isVisible()).resolves.toBe(true);
      await expectAccessible(page, "log-entry");

      // An API's, a role's and a connection's own pages (the control plane's seeded ones).
      await page.goto(`${base}/admin/t/control_plane/apis`);
      await page.getByRole("link", { name: "Gatehouse Management API" }).click();
      await expect(page.getByRole("heading", { level: 1, name: "Gatehouse Management API" }).isVisible()).resolves.toBe(true);
      expect(await page.getByLabel("Signing algorithm").inputValue()).toBe("RS256");
      await expectAccessible(page, "api");
      await page.goto(`${base}/admin/t/control_plane/roles`);
      await page.getByRole("link", { name: "Gatehouse Viewer" }).click();
      await expect(page.getByRole("heading", { level: 1, name: "Gatehouse Viewer" }).isVisible()).resolves.toBe(true);
      expect(await page.getByRole("cell", { name: "read:stats", exact: true }).count()).toBe(1);
      await expectAccessible(page, "role");
      await page.goto(`${base}/admin/t/control_plane/connections`);
      await page.getByRole("link", { name: "Username-Password-Authentication" }).click();
      await expect(page.getByRole("heading", { level: 2, name: "Database settings and password policy" }).isVisible()).resolves.toBe(true);
      await expectAccessible(page, "connection");

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
      await page.waitForURL(/\/u2\/login/);
      await page.getByLabel("Email").fill(ADMIN.email);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: /continue|log in/i }).click();
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
        await expect(page.getByRole("heading", { level: 1, name: title }).isVisible()).resolves.toBe(true);
        await expectAccessible(page, path);
        if (path === "keys") expect(await page.getByRole("cell", { name: "Current", exact: true }).count()).toBeGreaterThan(0);
      }
      expect(log.pageErrors).toEqual([]);
      expect(log.consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
