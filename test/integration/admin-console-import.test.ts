import { describe, expect, it } from "vitest";
import { IMPORT_FILE_MAX_BYTES } from "../../src/shared/schemas/jobs";
import { call, createTenant, mgmt } from "../helpers/api";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { dbConnectionId, drain } from "../helpers/jobs";
import { TestBrowser } from "../helpers/mfa";
import { tenantSql } from "../helpers/outbox";
import { operatorWith as operatorUser } from "../helpers/operators";

/**
 * Issue 30 "users ... import job with progress": the users screen's import form posts the file as
 * multipart/form-data to POST /jobs/users-imports with the operator's token (the reference shape), and the
 * job's page shows its status, progress and failed rows (GET /jobs/{id}, GET /jobs/{id}/errors).
 */
const PASSWORD = "operator-p4ssw0rd!";
const asTenant = (t: string) => ({ headers: { "tenant-id": t } });

/** A browser's multipart form post (the import form has enctype="multipart/form-data"). */
function postFile(browser: TestBrowser, path: string, fields: Record<string, string>, file?: string): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file !== undefined) form.append("users", new Blob([file], { type: "application/json" }), "people.json");
  return call(path, { method: "POST", host: browser.host, redirect: "manual", headers: { cookie: browser.cookieHeader() }, body: form });
}

const operatorWith = (roleName: string | null) => operatorUser(roleName, PASSWORD);

const userEmails = async (tenant: string) => ((await (await mgmt("GET", "/users?per_page=100", asTenant(tenant))).json()) as { email: string }[]).map((u) => u.email).sort();
const jobCount = async (tenant: string) => (await tenantSql<{ n: number }>(tenant, "SELECT count(*) AS n FROM jobs"))[0]?.n;

describe("admin console: users import job (issue 30)", () => {
  it("imports a file through POST /jobs/users-imports (multipart), shows the curl with -F users=@file.json, then the job's progress and failed rows", async () => {
    const tenant = await createTenant();
    const connection = await dbConnectionId(tenant);
    const path = `/admin/t/${tenant}/users`;
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, `${path}?import=1`);
    const html = await page.text();
    expect(html).toContain(`<form method="post" action="${path}/import" enctype="multipart/form-data"`);
    expect(html).toContain(`<option value="${connection}">Username-Password-Authentication</option>`);
    const csrf = fieldOf(html, "csrf");
    // The list alone links to the form (its connections are read only when the form is opened).
    const plain = await (await browser.get(path)).text();
    expect(plain).toContain(`href="${path}?import=1#import"`);
    expect(plain).not.toContain('enctype="multipart/form-data"');

    const file = JSON.stringify([{ email: "ann@example.com", name: "Ann" }, { email: "bob@example.com" }, { name: "no email here" }]);
    const started = await postFile(browser, `${path}/import`, { csrf, connection_id: connection, upsert: "true", send_completion_email: "true" }, file);
    expect(started.status).toBe(201);
    const startedHtml = await started.text();
    expect(startedHtml).toContain("Import started");
    const jobId = /<h1>Job (job_[A-Za-z0-9]+)<\/h1>/.exec(startedHtml)?.[1] as string;
    expect(jobId).toBeDefined();
    expect(startedHtml).toMatch(/<strong>pending<\/strong>/);
    // The job runs: a reload link and an opt-in automatic refresh (a meta refresh, no script).
    expect(startedHtml).toContain(`href="/admin/t/${tenant}/jobs/${jobId}?watch=1"`);
    expect(startedHtml).not.toContain('http-equiv="refresh"');
    // "Show the API call": the multipart call as curl, the file as -F users=@file.json, never its content.
    expect(startedHtml).toContain("curl -X POST &#39;http://localhost:8787/api/v2/jobs/users-imports&#39;");
    expect(startedHtml).toContain("-F users=@file.json");
    expect(startedHtml).toContain(`-F &#39;connection_id=${connection}&#39;`);
    expect(startedHtml).toContain("-F &#39;upsert=true&#39;");
    expect(startedHtml).not.toContain("ann@example.com");
    const job = (await (await mgmt("GET", `/jobs/${jobId}`, asTenant(tenant))).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ type: "users_import", connection_id: connection, upsert: true, send_completion_email: true });

    await drain(tenant, jobId);
    // While a job runs (held in processing here: the tenant's alarm may finish a small job at once), the
    // watched page reloads itself every 5 seconds and offers to stop.
    await tenantSql(tenant, "UPDATE jobs SET status = 'processing' WHERE id = ?", jobId);
    const watched = await (await browser.get(`/admin/t/${tenant}/jobs/${jobId}?watch=1`)).text();
    expect(watched).toContain('<meta http-equiv="refresh" content="5"/>');
    expect(watched).toContain(`<a href="/admin/t/${tenant}/jobs/${jobId}">Stop refreshing</a>`);
    await tenantSql(tenant, "UPDATE jobs SET status = 'completed' WHERE id = ?", jobId);
    const done = await browser.get(`/admin/t/${tenant}/jobs/${jobId}?watch=1`);
    expect(done.status).toBe(200);
    const doneHtml = await done.text();
    expect(doneHtml).toMatch(/<strong>completed<\/strong>/);
    expect(doneHtml).toContain('<progress id="job-progress" max="100" value="100">');
    expect(doneHtml).toMatch(/<dt>Inserted<\/dt><dd>2<\/dd>/);
    expect(doneHtml).toMatch(/<dt>Failed<\/dt><dd>1<\/dd>/);
    expect(doneHtml).not.toContain('http-equiv="refresh"');
    expect(doneHtml).toContain("<h2>Failed rows</h2>");
    expect(doneHtml).toContain("OBJECT_MISSING_REQUIRED_PROPERTY");
    expect(doneHtml).toContain(`/api/v2/jobs/${jobId}/errors`);
    expect(await userEmails(tenant)).toEqual(["ann@example.com", "bob@example.com"]);

    // A job that does not exist is the API's 404.
    const missing = await browser.get(`/admin/t/${tenant}/jobs/job_0000000000000000`);
    expect(missing.status).toBe(404);
  });

  it("bad input is the API's 4xx with its message and the form's choices kept; a file over the limit is a 413 with what to do, never a 500; nothing is imported", async () => {
    const tenant = await createTenant();
    const connection = await dbConnectionId(tenant);
    const path = `/admin/t/${tenant}/users`;
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, `${path}?import=1`);
    const csrf = fieldOf(await page.text(), "csrf");
    const fields = { csrf, connection_id: connection, upsert: "true" };

    const notJson = await postFile(browser, `${path}/import`, fields, "{not json");
    expect(notJson.status).toBe(400);
    const notJsonHtml = await notJson.text();
    expect(notJsonHtml).toContain("The users file is not valid JSON");
    expect(notJsonHtml).toContain(`<option value="${connection}" selected="">`);
    expect(notJsonHtml).toMatch(/name="upsert" value="true" checked=""/);
    expect(notJsonHtml).not.toMatch(/name="send_completion_email" value="true" checked=""/);

    const noFile = await postFile(browser, `${path}/import`, fields);
    expect(noFile.status).toBe(400);
    expect(await noFile.text()).toContain("Missing required property: users");
    const badConnection = await postFile(browser, `${path}/import`, { ...fields, connection_id: "con_nope" }, "[]");
    expect(badConnection.status).toBe(400);
    expect(await badConnection.text()).toContain("The connection does not exist.");

    // Just over the API's limit: the API's 413, worded by the API, on the users screen.
    const overApi = JSON.stringify([{ email: "x@example.com", name: "x".repeat(IMPORT_FILE_MAX_BYTES) }]);
    const tooLarge = await postFile(browser, `${path}/import`, fields, overApi);
    expect(tooLarge.status).toBe(413);
    const tooLargeHtml = await tooLarge.text();
    expect(tooLargeHtml).toContain(`The users file exceeds ${IMPORT_FILE_MAX_BYTES} bytes; split it into several jobs`);
    expect(tooLargeHtml).toContain("<h1>Users</h1>");
    // Far over: the console refuses it before reading it, and says what to do.
    const huge = await postFile(browser, `${path}/import`, fields, "x".repeat(2 * IMPORT_FILE_MAX_BYTES));
    expect(huge.status).toBe(413);
    const hugeHtml = await huge.text();
    expect(hugeHtml).toContain(`at most ${IMPORT_FILE_MAX_BYTES / 1024} KB`);
    expect(hugeHtml).toContain(`href="${path}"`);
    expect(await userEmails(tenant)).toEqual([]);
    expect(await jobCount(tenant)).toBe(0);

    // A tenant without a database connection gets no form, and says why.
    expect((await mgmt("DELETE", `/connections/${connection}`, asTenant(tenant))).status).toBe(204);
    const none = await (await browser.get(`${path}?import=1`)).text();
    expect(none).toContain("This tenant has no database connection to import users into.");
    expect(none).not.toContain('enctype="multipart/form-data"');
  });

  it("who can reach: a Viewer sees no import form and a forged import is the API's 403; without a session or roles nothing runs", async () => {
    const tenant = await createTenant();
    const connection = await dbConnectionId(tenant);
    const path = `/admin/t/${tenant}/users`;
    const file = JSON.stringify([{ email: "forged@example.com" }]);

    const viewer = await consoleLogin(await operatorWith("Gatehouse Viewer"), PASSWORD, path);
    expect(viewer.page.status).toBe(200);
    const html = await viewer.page.text();
    expect(html).not.toContain("Import users");
    expect(html).not.toContain('type="file"');
    const csrf = fieldOf(html, "csrf");
    const forged = await postFile(viewer.browser, `${path}/import`, { csrf, connection_id: connection }, file);
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("create:users");

    // Without the CSRF token (the admin's own session): refused before any call.
    const admin = await consoleLogin(ADMIN.email, ADMIN.password, path);
    const noCsrf = await postFile(admin.browser, `${path}/import`, { connection_id: connection }, file);
    expect(noCsrf.status).toBe(403);
    expect(await noCsrf.text()).toContain("This form is out of date or came from another site");

    // No session: the login, for the form and for a job's page.
    const anonymous = new TestBrowser("localhost:8787");
    const post = await postFile(anonymous, `${path}/import`, { connection_id: connection }, file);
    expect(post.status).toBe(302);
    expect(post.headers.get("location")).toMatch(/^\/admin\/login\?return_to=/);
    const jobPage = await anonymous.get(`/admin/t/${tenant}/jobs/job_0000000000000000`);
    expect(jobPage.status).toBe(302);

    // A control-plane user without operator roles (as an admin of another tenant is here): the API's 403.
    const nobody = await consoleLogin(await operatorWith(null), PASSWORD, path);
    expect(nobody.page.status).toBe(403);
    const nobodyForged = await postFile(nobody.browser, `${path}/import`, { csrf: fieldOf(await nobody.page.text(), "csrf"), connection_id: connection }, file);
    expect(nobodyForged.status).toBe(403);
    expect(await userEmails(tenant)).toEqual([]);
    expect(await jobCount(tenant)).toBe(0);
  });
});
