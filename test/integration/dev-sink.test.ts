import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { createOrg, freshTenant } from "../helpers/organizations";
import { runAlarm } from "../helpers/jobs";
import { api, DB } from "../helpers/users";

/**
 * One development sink (issue 14 follow-up): organization invitations, verification emails, MFA and
 * passwordless codes all land in the tenant's sink, read at GET /__dev/messages (alias /__dev/mail) as
 * JSON, or as a page a person reads in a browser.
 */
describe("the development message sink", () => {
  it("invitations and verification emails land in the same sink, listed alike at /__dev/messages and /__dev/mail", async () => {
    const { tenantId } = await freshTenant();
    const host = `${tenantId}.localhost:8787`;
    const org = await createOrg(tenantId, { display_name: "Sink <Org>" });
    const client = await seedClient(tenantId);
    const invitee = `sink-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const invited = await api(tenantId, "POST", `/organizations/${org.id}/invitations`, { inviter: { name: "Ann" }, invitee: { email: invitee }, client_id: client.client_id });
    expect(invited.status).toBe(201);
    const user = (await (await api(tenantId, "POST", "/users", { connection: DB, email: invitee, password: "Sufficient-Pw-1" })).json()) as { user_id: string };
    expect((await api(tenantId, "POST", "/jobs/verification-email", { user_id: user.user_id })).status).toBe(201);
    await runAlarm(tenantId); // the relay sends the verification email the job's commit queued

    const read = async (path: string) => {
      const res = await call(`${path}?to=${encodeURIComponent(invitee.toUpperCase())}`, { host });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      return ((await res.json()) as { messages: Array<Record<string, unknown>> }).messages;
    };
    const messages = await read("/__dev/messages");
    expect(messages.map((m) => m.subject)).toEqual(["Verify your email", "Ann has invited you to join Sink <Org>"]);
    expect(messages[1]).toMatchObject({ channel: "email", to: invitee, from: "no-reply@gatehouse.local", html: expect.stringContaining("Sink &lt;Org&gt;") });
    expect(messages[1]?.text).toBe(messages[1]?.body);
    expect(await read("/__dev/mail")).toEqual(messages);
  });

  it("a browser gets a page a person reads, the messages' text escaped", async () => {
    const { tenantId } = await freshTenant();
    const host = `${tenantId}.localhost:8787`;
    const org = await createOrg(tenantId, { display_name: "<script>alert(1)</script>" });
    const client = await seedClient(tenantId);
    await api(tenantId, "POST", `/organizations/${org.id}/invitations`, { inviter: { name: "Ann" }, invitee: { email: "page@example.com" }, client_id: client.client_id });
    const res = await call("/__dev/messages", { host, headers: { accept: "text/html,application/xhtml+xml" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain("Development messages");
    expect(html).toContain("page@example.com");
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(html).not.toContain("<script>alert(1)</script>");
    expect((await call("/__dev/mail?format=json", { host, headers: { accept: "text/html" } })).headers.get("content-type")).toMatch(/json/);
  });
});
