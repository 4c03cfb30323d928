import { describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { createTenant, mgmt } from "../helpers/api";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { TestBrowser } from "../helpers/mfa";
import { operatorWith as operatorUser } from "../helpers/operators";

/**
 * Issue 30: a webhook's edit page (PATCH /hooks/{id}) and the log streams screen (POST and DELETE
 * /log-streams, a delete confirmed on its own page), each a client of /api/v2 with the operator's token.
 * The stream's authorization header is sent once and never printed back on any page.
 */
const PASSWORD = "operator-p4ssw0rd!";
const SINK_SECRET = "Bearer s3cret-sink-token-42";
const asTenant = (t: string) => ({ headers: { "tenant-id": t } });
const read = async <T,>(tenant: string, path: string) => (await (await mgmt("GET", path, asTenant(tenant))).json()) as T;
const writeForms = (html: string) => [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]).filter((a) => a !== "/admin/logout");

const operatorWith = (roleName: string | null) => operatorUser(roleName, PASSWORD);

async function furnished() {
  const tenant = await createTenant();
  const hook = (await (await mgmt("POST", "/hooks", { ...asTenant(tenant), body: { name: "orders", trigger_id: "post-user-login", url: "https://hooks.example.com/a" } })).json()) as { id: string };
  const stream = (await (
    await mgmt("POST", "/log-streams", { ...asTenant(tenant), body: { name: "siem", type: "http", sink: { httpEndpoint: "https://logs.example.com/in", httpAuthorization: SINK_SECRET } } })
  ).json()) as { id: string };
  return { tenant, hook, stream, t: `/admin/t/${tenant}` };
}

describe("admin console: webhook edit (issue 30)", () => {
  it("edits a webhook's name, trigger, URL and enabled flag through PATCH /hooks/{id}; a bad URL is the API's 400 with the typed values kept", async () => {
    const { tenant, hook, t } = await furnished();
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, `${t}/webhooks`);
    const list = await page.text();
    expect(list).toContain(`<a href="${t}/webhooks/${hook.id}">orders</a>`);
    const csrf = fieldOf(list, "csrf");
    const edit = await browser.get(`${t}/webhooks/${hook.id}`);
    expect(edit.status).toBe(200);
    const editHtml = await edit.text();
    expect(editHtml).toContain('value="https://hooks.example.com/a"');
    expect(editHtml).toContain('<option value="post-user-login" selected="">');

    const saved = await browser.post(`${t}/webhooks/${hook.id}`, { csrf, name: "orders v2", trigger_id: "post-user-registration", url: "https://hooks.example.com/b" });
    expect(saved.status).toBe(200);
    const savedHtml = await saved.text();
    expect(savedHtml).toContain("Webhook saved.");
    expect(savedHtml).toContain("curl -X PATCH");
    expect(await read(tenant, `/hooks/${hook.id}`)).toMatchObject({ name: "orders v2", trigger_id: "post-user-registration", url: "https://hooks.example.com/b", enabled: false });

    const bad = await browser.post(`${t}/webhooks/${hook.id}`, { csrf, name: "orders v3", trigger_id: "post-user-login", url: "ftp://hooks.example.com/c", enabled: "true" });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(badHtml).toContain("url must be an absolute http(s) URL");
    expect(badHtml).toContain('value="ftp://hooks.example.com/c"');
    expect(badHtml).toContain('value="orders v3"');
    expect(await read(tenant, `/hooks/${hook.id}`)).toMatchObject({ name: "orders v2", url: "https://hooks.example.com/b", enabled: false });
    expect((await browser.get(`${t}/webhooks/hk_nope`)).status).toBe(404);
  });
});

describe("admin console: log streams (issue 30)", () => {
  it("creates an http stream (the authorization header never printed back), refuses a bad endpoint with the text kept, and deletes after a confirmation", async () => {
    const { tenant, stream, t } = await furnished();
    const path = `${t}/log-streams`;
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, path);
    const html = await page.text();
    expect(html).toContain("<code>https://logs.example.com/in</code>");
    expect(html).not.toContain("s3cret-sink-token");
    const csrf = fieldOf(html, "csrf");

    const created = await browser.post(path, { csrf, name: "archive", httpEndpoint: "https://archive.example.com/logs", httpContentType: "application/json", httpContentFormat: "JSONLINES", httpAuthorization: "Bearer another-s3cret" });
    expect(created.status).toBe(201);
    const createdHtml = await created.text();
    expect(createdHtml).toContain("Log stream archive added.");
    expect(createdHtml).toContain("<code>https://archive.example.com/logs</code>");
    expect(createdHtml).toContain("&quot;httpAuthorization&quot;:&quot;REDACTED&quot;");
    expect(createdHtml).not.toContain("another-s3cret");
    const streams = await read<{ name: string; sink: Record<string, string> }[]>(tenant, "/log-streams");
    expect(streams.find((s) => s.name === "archive")?.sink).toMatchObject({ httpEndpoint: "https://archive.example.com/logs", httpContentFormat: "JSONLINES" });

    const bad = await browser.post(path, { csrf, name: "typo", httpEndpoint: "ftp://nowhere.example.com/", httpContentType: "application/json", httpContentFormat: "JSONARRAY", httpAuthorization: "Bearer typed-s3cret" });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(badHtml).toContain("httpEndpoint must be an absolute http(s) URL");
    expect(badHtml).toContain('value="ftp://nowhere.example.com/"');
    expect(badHtml).toContain('value="typo"');
    expect(badHtml).not.toContain("typed-s3cret");
    expect((await read<unknown[]>(tenant, "/log-streams")).length).toBe(2);

    // Delete: a link to a confirmation page, then the POST it makes.
    expect(html).toContain(`href="${path}/${stream.id}/delete"`);
    const confirm = await browser.get(`${path}/${stream.id}/delete`);
    expect(confirm.status).toBe(200);
    const confirmHtml = await confirm.text();
    expect(confirmHtml).toContain("Delete the log stream <strong>siem</strong>");
    expect(writeForms(confirmHtml)).toEqual([`${path}/${stream.id}/delete`]);
    expect(confirmHtml).not.toContain("s3cret-sink-token");
    // An old login is sent to log in again first (step-up); nothing is deleted.
    const start = Date.now();
    setClock(() => start + 10 * 60_000);
    try {
      const stale = await browser.post(`${path}/${stream.id}/delete`, { csrf });
      expect(stale.status).toBe(303);
      expect(stale.headers.get("location")).toMatch(/^\/admin\/login\?step_up=1&return_to=/);
    } finally {
      setClock();
    }
    expect((await read<unknown[]>(tenant, "/log-streams")).length).toBe(2);
    const deleted = await browser.post(`${path}/${stream.id}/delete`, { csrf });
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).toContain("Log stream deleted.");
    expect((await read<{ id: string }[]>(tenant, "/log-streams")).map((s) => s.id)).not.toContain(stream.id);
    expect((await browser.post(`${path}/${stream.id}/delete`, { csrf })).status).toBe(404);
  });
});

describe("admin console: who reaches the webhook edit and log stream screens (issue 30)", () => {
  it("a Viewer reads them without a form, a delete link or a secret, and forged writes are the API's 403 with nothing changed", async () => {
    const { tenant, hook, stream, t } = await furnished();
    const { browser, page } = await consoleLogin(await operatorWith("Gatehouse Viewer"), PASSWORD, `${t}/log-streams`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(writeForms(html)).toEqual([]);
    expect(html).not.toContain("/delete");
    expect(html).not.toContain("s3cret-sink-token");
    for (const path of [`${t}/webhooks/${hook.id}`, `${t}/log-streams/${stream.id}/delete`]) {
      const seen = await browser.get(path);
      expect(seen.status, path).toBe(200);
      expect(writeForms(await seen.text()), path).toEqual([]);
    }
    const csrf = fieldOf(html, "csrf");
    const forged: [string, Record<string, string>][] = [
      [`${t}/webhooks/${hook.id}`, { name: "forged", trigger_id: "post-user-login", url: "https://evil.example.com/" }],
      [`${t}/log-streams`, { httpEndpoint: "https://evil.example.com/", httpAuthorization: "x" }],
      [`${t}/log-streams/${stream.id}/delete`, {}],
    ];
    for (const [path, fields] of forged) {
      const res = await browser.post(path, { csrf, ...fields });
      expect(res.status, path).toBe(403);
    }
    expect(await read(tenant, `/hooks/${hook.id}`)).toMatchObject({ name: "orders", url: "https://hooks.example.com/a", enabled: true });
    expect((await read<{ id: string }[]>(tenant, "/log-streams")).map((s) => s.id)).toEqual([stream.id]);
  });

  it("without a session every page and form goes to the login; without the CSRF token or operator roles nothing is written", async () => {
    const { tenant, hook, stream, t } = await furnished();
    const anonymous = new TestBrowser("localhost:8787");
    for (const path of [`${t}/webhooks/${hook.id}`, `${t}/log-streams`, `${t}/log-streams/${stream.id}/delete`]) {
      const res = await anonymous.get(path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location"), path).toBe(`/admin/login?return_to=${encodeURIComponent(path)}`);
      const posted = await anonymous.post(path, { name: "anonymous", httpEndpoint: "https://evil.example.com/" });
      expect(posted.status, path).toBe(302);
    }
    const admin = await consoleLogin(ADMIN.email, ADMIN.password, `${t}/log-streams`);
    expect((await admin.browser.post(`${t}/log-streams/${stream.id}/delete`, {})).status).toBe(403);
    expect((await admin.browser.post(`${t}/webhooks/${hook.id}`, { name: "no-csrf", trigger_id: "post-user-login", url: "https://evil.example.com/" })).status).toBe(403);

    // A control-plane user without operator roles (as an admin of another tenant is here): the API's 403.
    const nobody = await consoleLogin(await operatorWith(null), PASSWORD, `${t}/log-streams`);
    expect(nobody.page.status).toBe(403);
    expect(await nobody.page.text()).toContain("Insufficient scope");
    expect((await nobody.browser.get(`${t}/webhooks/${hook.id}`)).status).toBe(403);
    const csrf = fieldOf(await (await nobody.browser.get(`${t}/log-streams`)).text(), "csrf");
    expect((await nobody.browser.post(`${t}/log-streams/${stream.id}/delete`, { csrf })).status).toBe(403);
    expect((await nobody.browser.post(`${t}/log-streams`, { csrf, httpEndpoint: "https://evil.example.com/" })).status).toBe(403);
    expect(await read(tenant, `/hooks/${hook.id}`)).toMatchObject({ name: "orders", enabled: true });
    expect((await read<{ id: string }[]>(tenant, "/log-streams")).map((s) => s.id)).toEqual([stream.id]);
  });
});
