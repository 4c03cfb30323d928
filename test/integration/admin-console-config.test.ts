import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { setClock } from "../../src/shared/clock";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { createClient } from "../helpers/management";
import { injectClock, outboxRows, tenantSql } from "../helpers/outbox";

/**
 * Issue 30: the console's tenant configuration screens (signing keys, custom domains, attack protection,
 * tenant settings, webhooks and failed events, branding), each a client of /api/v2 with the operator's token.
 */
afterEach(() => setClock());

const asTenant = (t: string) => ({ headers: { "tenant-id": t } });
const read = async <T,>(tenant: string, path: string) => (await (await mgmt("GET", path, asTenant(tenant))).json()) as T;

/** Everything a page must never carry: private key material, secrets, the operator's token. */
function expectNoSecret(html: string) {
  expect(html).not.toMatch(/PRIVATE KEY|"d":|client_secret|Bearer ey|signing_secret/);
}

async function adminOn(path: string) {
  const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, path);
  expect(page.status).toBe(200);
  const html = await page.text();
  expectNoSecret(html);
  return { browser, html, csrf: fieldOf(html, "csrf") };
}

describe("admin console: signing keys (issue 30)", () => {
  it("shows current/next/previous without private material; rotate and revoke go through /keys/signing", async () => {
    const tenant = await createTenant();
    const path = `/admin/t/${tenant}/keys`;
    const { browser, html, csrf } = await adminOn(path);
    const before = await read<{ kid: string; current: boolean }[]>(tenant, "/keys/signing");
    const first = before.find((k) => k.current)?.kid as string;
    expect(html).toContain(`<code>${first}</code>`);
    expect(html).toMatch(/<td>Current<\/td>/);
    const rotated = await browser.post(`${path}/rotate`, { csrf, activate_in_days: "0" });
    expect(rotated.status).toBe(200);
    const after = await rotated.text();
    expectNoSecret(after);
    const keys = await read<{ kid: string; current: boolean; previous: boolean; revoked: boolean }[]>(tenant, "/keys/signing");
    const current = keys.find((k) => k.current)?.kid as string;
    expect(current).not.toBe(first);
    expect(after).toContain(`Rotated: the new key is ${current}.`);
    expect(keys.find((k) => k.kid === first)?.previous).toBe(true);
    expect(after).toMatch(/<td>Previous<\/td>/);

    // Revoking is destructive: an old login is sent to log in again (max_age=0), and nothing is revoked.
    const start = Date.now();
    setClock(() => start + 10 * 60_000);
    const stale = await browser.post(`${path}/${first}/revoke`, { csrf });
    expect(stale.status).toBe(303);
    expect(stale.headers.get("location")).toBe(`/admin/login?step_up=1&return_to=${encodeURIComponent(path)}`);
    expect((await read<{ kid: string; revoked: boolean }[]>(tenant, "/keys/signing")).find((k) => k.kid === first)?.revoked).toBe(false);
    setClock();
    const revoked = await browser.post(`${path}/${first}/revoke`, { csrf });
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).toContain(`Key ${first} revoked.`);
    expect((await read<{ kid: string; revoked: boolean }[]>(tenant, "/keys/signing")).find((k) => k.kid === first)?.revoked).toBe(true);
    // A bad activation delay is the API's 400, shown as the API worded it.
    const bad = await browser.post(`${path}/rotate`, { csrf, activate_in_days: "soon" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("activate_in_days");
  });
});

describe("admin console: custom domains (issue 30)", () => {
  it("adds a domain, shows its DNS records and status, verifies and deletes it", async () => {
    const tenant = await createTenant();
    const { browser, html, csrf } = await adminOn(`/admin/t/${tenant}/domains`);
    expect(html).toContain("No custom domain yet");
    const domain = `id.${uniqueId("cd")}.example.test`;
    const added = await browser.post(`/admin/t/${tenant}/domains`, { csrf, domain, type: "self_managed_certs" });
    expect(added.status).toBe(303);
    const [record] = await read<{ custom_domain_id: string; domain: string }[]>(tenant, "/custom-domains");
    expect(record?.domain).toBe(domain);
    const page = `/admin/t/${tenant}/domains/${record?.custom_domain_id}`;
    expect(added.headers.get("location")).toBe(page);
    const detail = await (await browser.get(page)).text();
    expect(detail).toContain(`<code>_cf-custom-hostname.${domain}</code>`);
    expect(detail).toContain("verification=");
    const verified = await browser.post(`${page}/verify`, { csrf });
    expect(verified.status).toBe(200);
    expect(await verified.text()).toMatch(/Verification ran: the domain is \w+\./);
    const list = await (await browser.get(`/admin/t/${tenant}/domains`)).text();
    expect(list).toContain(`href="${page}"`);
    // A taken or malformed domain is the API's refusal, nothing added.
    const bad = await browser.post(`/admin/t/${tenant}/domains`, { csrf, domain: "not a domain", type: "self_managed_certs" });
    expect(bad.status).toBe(400);
    expect(await read<unknown[]>(tenant, "/custom-domains")).toHaveLength(1);
    const deleted = await browser.post(`${page}/delete`, { csrf });
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).toContain("Domain deleted.");
    expect(await read<unknown[]>(tenant, "/custom-domains")).toEqual([]);
  });
});

describe("admin console: attack protection (issue 30)", () => {
  it("saves brute force, suspicious IP throttling and breached passwords through /attack-protection; shows bot detection as stored", async () => {
    const tenant = await createTenant();
    const path = `/admin/t/${tenant}/protection`;
    const { browser, html, csrf } = await adminOn(path);
    expect(html).toContain('name="max_attempts" type="number" value="3"');
    expect(html).toContain("<dt>Bot detection level</dt><dd>medium</dd>");
    const brute = await browser.post(`${path}/brute-force`, { csrf, enabled: "true", max_attempts: "5", mode: "count_per_identifier_and_ip", shields: "block", allowlist: "10.0.0.0/8\n192.0.2.1" });
    expect(brute.status).toBe(200);
    expect(await brute.text()).toContain("Brute-force protection saved.");
    expect(await read(tenant, "/attack-protection/brute-force-protection")).toEqual({
      enabled: true,
      max_attempts: 5,
      mode: "count_per_identifier_and_ip",
      shields: ["block"],
      allowlist: ["10.0.0.0/8", "192.0.2.1"],
    });
    const ip = await browser.post(`${path}/suspicious-ip`, { csrf, enabled: "true", shields: "admin_notification", login_max: "50", login_rate: "1200", signup_max: "", signup_rate: "", allowlist: "" });
    expect(await ip.text()).toContain("Suspicious IP throttling saved.");
    expect(await read(tenant, "/attack-protection/suspicious-ip-throttling")).toMatchObject({
      enabled: true,
      shields: ["admin_notification"],
      stage: { "pre-login": { max_attempts: 50, rate: 1200 }, "pre-user-registration": { max_attempts: 20, rate: 3000 } },
    });
    const breached = await browser.post(`${path}/breached-password`, { csrf, enabled: "true", shields: "block" });
    expect(await breached.text()).toContain("Breached password detection saved.");
    expect(await read(tenant, "/attack-protection/breached-password-detection")).toMatchObject({ enabled: true, shields: ["block"] });
    // Out of range: the API's 400 and its words; nothing changed.
    const bad = await browser.post(`${path}/brute-force`, { csrf, enabled: "true", max_attempts: "0", mode: "count_per_identifier", allowlist: "" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("max_attempts");
    expect(await read(tenant, "/attack-protection/brute-force-protection")).toMatchObject({ max_attempts: 5 });
  });
});

describe("admin console: tenant settings (issue 30)", () => {
  it("saves names, support contacts, session lifetimes and locales through PATCH /tenants/settings; bad input changes nothing", async () => {
    const tenant = await createTenant();
    const path = `/admin/t/${tenant}/settings`;
    const { browser, html, csrf } = await adminOn(path);
    expect(html).toContain('name="session_lifetime" type="number" value="168"');
    const form = { csrf, friendly_name: "Acme Login", support_email: "help@acme.example", support_url: "https://acme.example/help", session_lifetime: "24", idle_session_lifetime: "2", enabled_locales: "en, fr", default_signing_alg: "RS256" };
    const saved = await browser.post(path, form);
    expect(saved.status).toBe(200);
    const page = await saved.text();
    expect(page).toContain("Settings saved.");
    expect(page).toContain('value="Acme Login"');
    expect(await read(tenant, "/tenants/settings")).toMatchObject({ friendly_name: "Acme Login", support_email: "help@acme.example", session_lifetime: 24, idle_session_lifetime: 2, enabled_locales: ["en", "fr"] });
    const bad = await browser.post(path, { ...form, friendly_name: "Other", support_email: "not-an-email" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("support_email must be an email address");
    const lifetime = await browser.post(path, { ...form, session_lifetime: "forever" });
    expect(lifetime.status).toBe(400);
    expect(await read(tenant, "/tenants/settings")).toMatchObject({ friendly_name: "Acme Login", session_lifetime: 24 });
  });
});

describe("admin console: webhooks and failed events (issue 30)", () => {
  it("creates and deletes a webhook through /hooks, and retries a failed event through /failed-events/{id}/retry", async () => {
    const tenant = await createTenant();
    const clock = await injectClock(tenant);
    await runInDurableObject(env.TENANT.getByName(tenant), (o: TenantObject) => {
      o.outbox.commit((tx) => tx.emit({ event_type: "hook.post-user-login", payload: { trigger_id: "post-user-login", data: {}, timestamp: new Date(tx.now).toISOString() } }));
    });
    const [event] = await outboxRows(tenant, "hook.post-user-login");
    await tenantSql(tenant, "UPDATE outbox SET dead_lettered_at = ?, processed_at = ?, retry_count = 5, final_error = ? WHERE id = ?", clock.now, clock.now, "webhook: HTTP 500", event?.id as string);
    const stream = await mgmt("POST", "/log-streams", { ...asTenant(tenant), body: { name: "siem", type: "http", sink: { httpEndpoint: "https://logs.example.com/in", httpAuthorization: "Bearer s3cret-sink-token" } } });
    expect(stream.status, await stream.clone().text()).toBe(201);
    const path = `/admin/t/${tenant}/webhooks`;
    const { browser, html, csrf } = await adminOn(path);
    expect(html).toContain("<code>https://logs.example.com/in</code>");
    expect(html).not.toContain("s3cret-sink-token");
    expect(html).toContain("<code>hook.post-user-login</code>");
    expect(html).toContain("webhook: HTTP 500");
    const created = await browser.post(path, { csrf, name: "orders", trigger_id: "post-user-registration", url: "https://hooks.example.com/orders" });
    expect(created.status).toBe(201);
    expect(await created.text()).toContain("<code>https://hooks.example.com/orders</code>");
    const [hook] = await read<{ id: string; trigger_id: string }[]>(tenant, "/hooks");
    expect(hook?.trigger_id).toBe("post-user-registration");
    const bad = await browser.post(path, { csrf, trigger_id: "post-user-registration", url: "ftp://hooks.example.com/" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("url must be an absolute http(s) URL");
    const retried = await browser.post(`${path}/failed/${event?.id}/retry`, { csrf });
    expect(retried.status).toBe(200);
    expect(await retried.text()).toContain("Event queued again for delivery.");
    expect(await read(tenant, "/failed-events")).toEqual([]);
    expect((await browser.post(`${path}/failed/${event?.id}/retry`, { csrf })).status).toBe(404);
    const disabled = await browser.post(`${path}/${hook?.id}/enabled`, { csrf, enabled: "false" });
    expect(await disabled.text()).toContain("Webhook disabled.");
    expect(((await read<{ enabled: boolean }[]>(tenant, "/hooks"))[0] as { enabled: boolean }).enabled).toBe(false);
    const deleted = await browser.post(`${path}/${hook?.id}/delete`, { csrf });
    expect(await deleted.text()).toContain("Webhook deleted.");
    expect(await read(tenant, "/hooks")).toEqual([]);
  });
});

const TEMPLATE = `<!DOCTYPE html><html lang="{{ locale }}"><head>{%- auth0:head -%}</head><body>{%- auth0:widget -%}</body></html>`;

describe("admin console: branding and the login-page preview (issue 30)", () => {
  it("saves the theme (created, then updated whole), the page template, and links the tenant's real login page", async () => {
    const tenant = await createTenant();
    await createClient({ name: "Shop", app_type: "regular_web", callbacks: ["https://shop.example.com/cb"] }, asTenant(tenant));
    const path = `/admin/t/${tenant}/branding`;
    const { browser, html, csrf } = await adminOn(path);
    expect(html).toContain("defaults: no theme saved yet");
    expect(html).toMatch(/<svg[^>]+role="img"/);
    const href = /href="([^"]+\/authorize\?[^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
    const login = new URL(href);
    expect(login.host).toBe(`${tenant}.localhost:8787`);
    expect(login.searchParams.get("redirect_uri")).toBe("https://shop.example.com/cb");
    expect(html).toContain('target="_blank" rel="noopener noreferrer"');
    const created = await browser.post(`${path}/theme`, { csrf, "colors.primary_button": "#7a1fa2", page_background: "#e8f0fe", font_url: "", reference_text_size: "17", logo_url: "" });
    expect(created.status).toBe(200);
    const page = await created.text();
    expect(page).toContain("Theme saved.");
    expect(page).toContain('fill="#7a1fa2"');
    const theme = await read<{ themeId: string; colors: Record<string, string>; fonts: { reference_text_size: number } }>(tenant, "/branding/themes/default");
    expect(theme.colors.primary_button).toBe("#7a1fa2");
    expect(theme.fonts.reference_text_size).toBe(17);
    const updated = await browser.post(`${path}/theme`, { csrf, "colors.primary_button": "#123456", page_background: "#e8f0fe", font_url: "", reference_text_size: "17", logo_url: "" });
    expect(await updated.text()).toContain("Theme saved.");
    expect((await read<{ themeId: string; colors: Record<string, string> }>(tenant, "/branding/themes/default")).colors.primary_button).toBe("#123456");
    const badColour = await browser.post(`${path}/theme`, { csrf, "colors.primary_button": "red;}", page_background: "#e8f0fe", font_url: "", reference_text_size: "17", logo_url: "" });
    expect(badColour.status).toBe(400);
    expect((await read<{ colors: Record<string, string> }>(tenant, "/branding/themes/default")).colors.primary_button).toBe("#123456");

    const template = await browser.post(`${path}/template`, { csrf, template: TEMPLATE });
    expect(await template.text()).toContain("Template saved.");
    expect(await read(tenant, "/branding/templates/universal-login")).toEqual({ body: TEMPLATE });
    const badTemplate = await browser.post(`${path}/template`, { csrf, template: "<html><body>no tags</body></html>" });
    expect(badTemplate.status).toBe(400);
    expect(await read(tenant, "/branding/templates/universal-login")).toEqual({ body: TEMPLATE });
    const removed = await browser.post(`${path}/template`, { csrf, template: "" });
    expect(await removed.text()).toContain("Template removed");
    expect((await mgmt("GET", "/branding/templates/universal-login", asTenant(tenant))).status).toBe(404);
  });
});
