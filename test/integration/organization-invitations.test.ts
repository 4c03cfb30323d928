import { describe, expect, it } from "vitest";
import { call, uniqueId } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { tick } from "../helpers/management";
import { createOrg, freshTenant } from "../helpers/organizations";
import { tenantSql } from "../helpers/outbox";

interface Invitation {
  id: string;
  organization_id: string;
  inviter: { name: string };
  invitee: { email: string };
  invitation_url: string;
  ticket_id: string;
  client_id: string;
  roles: string[];
  created_at: string;
  expires_at: string;
  [field: string]: unknown;
}

const LOGIN_URI = "https://app.example.com/login";

/** A tenant with an organization and an application whose login route is LOGIN_URI. */
async function setup() {
  const { tenantId, api } = await freshTenant();
  const org = await createOrg(tenantId, { display_name: "Acme & Co" });
  const client = await seedClient(tenantId);
  await api.json("PATCH", `/clients/${client.client_id}`, { initiate_login_uri: LOGIN_URI }, 200);
  const path = `/organizations/${org.id}/invitations`;
  const invite = (body: Record<string, unknown> = {}) => ({ inviter: { name: "Ann Admin" }, invitee: { email: `${uniqueId("inv")}@example.com` }, client_id: client.client_id, ...body });
  return { tenantId, api, org, client, path, invite };
}

/** The tenant's development sink's messages to an address (GET /__dev/mail, the sink's alias, on its loopback host). */
async function mailTo(tenantId: string, address: string) {
  const res = await call(`/__dev/mail?to=${encodeURIComponent(address)}`, { host: `${tenantId}.localhost:8787` });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: Array<{ to: string; subject: string; text: string; html: string }> }).messages;
}

describe("POST /organizations/{id}/invitations (SPEC §2.7)", () => {
  it("creates an invitation with the defaults: 7 days, no roles, a link to the application's login route, and sends the email", async () => {
    const { api, org, path, invite, client, tenantId } = await setup();
    const body = invite({ invitee: { email: "  Bob@Example.com " } });
    const invitation = await api.json<Invitation>("POST", path, body);
    expect(invitation).toMatchObject({
      id: expect.stringMatching(/^uinv_/),
      organization_id: org.id,
      inviter: { name: "Ann Admin" },
      invitee: { email: "bob@example.com" },
      client_id: client.client_id,
      roles: [],
      ticket_id: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
    });
    expect(Date.parse(invitation.expires_at) - Date.parse(invitation.created_at)).toBe(604_800_000);
    const url = new URL(invitation.invitation_url);
    expect(`${url.origin}${url.pathname}`).toBe(LOGIN_URI);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      invitation: invitation.ticket_id,
      organization: org.id,
      organization_name: org.name,
      ticket: invitation.ticket_id,
    });
    const mail = await mailTo(tenantId, "bob@example.com");
    expect(mail).toHaveLength(1);
    expect(mail[0]?.subject).toBe("Ann Admin has invited you to join Acme & Co");
    expect(mail[0]?.text).toContain(invitation.invitation_url);
    expect(mail[0]?.html).toContain("Acme &amp; Co");
    expect(mail[0]?.html).toContain(invitation.invitation_url.replace(/&/g, "&amp;"));
  });

  it("shows the development mailbox only to requests for a loopback host", async () => {
    const { tenantId } = await setup();
    // The tenant resolves (by the tenant-id header), but the host is not loopback: the sink stays hidden.
    const foreign: Array<Record<string, string>> = [{ host: "auth.example.com", "tenant-id": tenantId }, { "x-forwarded-host": "auth.example.com", "tenant-id": tenantId }];
    for (const headers of foreign) {
      expect((await call("/__dev/mail", { headers })).status).toBe(404);
      expect((await call("/__dev/messages", { headers })).status).toBe(404);
    }
    expect((await call("/__dev/mail", { host: `${tenantId}.localhost:8787` })).status).toBe(200);
  });

  it("sends nothing when send_invitation_email is false", async () => {
    const { api, path, invite, tenantId } = await setup();
    const email = `${uniqueId("quiet")}@example.com`;
    await api.json("POST", path, invite({ invitee: { email }, send_invitation_email: false }));
    expect(await mailTo(tenantId, email)).toEqual([]);
  });

  it("answers 400 naming the missing field for inviter.name, invitee.email and client_id", async () => {
    const { api, path, invite } = await setup();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ inviter: undefined }, "inviter"],
      [{ inviter: {} }, "inviter.name"],
      [{ invitee: undefined }, "invitee"],
      [{ invitee: {} }, "invitee.email"],
      [{ client_id: undefined }, "client_id"],
    ];
    for (const [override, field] of cases) {
      const res = await api.call("POST", path, invite(override));
      const body = (await res.json()) as { message: string; errorCode: string };
      expect(res.status, field).toBe(400);
      expect(body.message, field).toContain(`Missing required property: ${field}`);
    }
    const notEmail = await api.call("POST", path, invite({ invitee: { email: "not-an-email" } }));
    expect(notEmail.status).toBe(400);
    expect(((await notEmail.json()) as { message: string }).message).toContain("invitee.email");
  });

  it("accepts ttl_sec up to 2592000 (0 means the default) and refuses more, less or a fraction", async () => {
    const { api, path, invite } = await setup();
    const life = (i: Invitation) => Date.parse(i.expires_at) - Date.parse(i.created_at);
    expect(life(await api.json<Invitation>("POST", path, invite({ ttl_sec: 2_592_000, send_invitation_email: false })))).toBe(2_592_000_000);
    expect(life(await api.json<Invitation>("POST", path, invite({ ttl_sec: 0, send_invitation_email: false })))).toBe(604_800_000);
    expect(life(await api.json<Invitation>("POST", path, invite({ ttl_sec: 60, send_invitation_email: false })))).toBe(60_000);
    for (const ttl of [2_592_001, -1, 1.5, "60"]) {
      const res = await api.call("POST", path, invite({ ttl_sec: ttl }));
      expect(res.status, String(ttl)).toBe(400);
      expect(((await res.json()) as { message: string }).message).toContain("ttl_sec");
    }
  });

  it("refuses an unknown organization, application, connection or role, and unknown fields", async () => {
    const { api, org, path, invite } = await setup();
    expect((await api.call("POST", "/organizations/org_nothing/invitations", invite())).status).toBe(404);
    expect(((await (await api.call("POST", path, invite({ client_id: "nope" }))).json()) as { errorCode: string }).errorCode).toBe("inexistent_client");
    expect((await api.call("POST", path, invite({ connection_id: "con_nope" }))).status).toBe(404);
    expect(((await (await api.call("POST", path, invite({ roles: ["rol_nope"] }))).json()) as { errorCode: string }).errorCode).toBe("inexistent_role");
    expect((await api.call("POST", path, invite({ surprise: 1 }))).status).toBe(400);
    expect(await api.json("GET", `/organizations/${org.id}/invitations`)).toEqual([]);
  });

  it("keeps metadata, connection and roles of the invitation", async () => {
    const { tenantId, api, path, invite } = await setup();
    const connection = (await api.json<Array<{ id: string }>>("GET", "/connections"))[0]?.id as string;
    const invitation = await api.json<Invitation>("POST", path, invite({ connection_id: connection, app_metadata: { plan: "pro" }, user_metadata: { lang: "fr" }, send_invitation_email: false }));
    expect(invitation).toMatchObject({ connection_id: connection, app_metadata: { plan: "pro" }, user_metadata: { lang: "fr" } });
    expect(await tenantSql(tenantId, "SELECT count(*) AS n FROM organization_invitations")).toEqual([{ n: 1 }]);
  });

  it("initiate_login_uri must be https (http only on localhost) without a fragment; null clears it", async () => {
    const { api, client } = await setup();
    for (const uri of ["http://app.example.com/login", "https://app.example.com/login#x", "not a url", "javascript:alert(1)"]) {
      expect((await api.call("PATCH", `/clients/${client.client_id}`, { initiate_login_uri: uri })).status, uri).toBe(400);
    }
    expect((await api.json<Record<string, unknown>>("PATCH", `/clients/${client.client_id}`, { initiate_login_uri: "http://127.0.0.1:3000/login" })).initiate_login_uri).toBe("http://127.0.0.1:3000/login");
    expect((await api.json<Record<string, unknown>>("PATCH", `/clients/${client.client_id}`, { initiate_login_uri: null })).initiate_login_uri).toBeUndefined();
  });

  it("falls back to the tenant's login URL, then to Gatehouse's invitation landing on the tenant's host", async () => {
    const { tenantId, api, org, path } = await setup();
    const bare = await seedClient(tenantId);
    const invitation = await api.json<Invitation>("POST", path, { inviter: { name: "A" }, invitee: { email: "c@example.com" }, client_id: bare.client_id, send_invitation_email: false });
    const url = new URL(invitation.invitation_url);
    expect(`${url.origin}${url.pathname}`).toBe(`http://${tenantId}.localhost:8787/u2/invitation`);
    expect(url.searchParams.get("organization")).toBe(org.id);
    expect((await api.call("PATCH", "/tenants/settings", { default_redirection_uri: "http://portal.example.com/start" })).status).toBe(400);
    await api.json("PATCH", "/tenants/settings", { default_redirection_uri: "https://portal.example.com/start" });
    const viaTenant = await api.json<Invitation>("POST", path, { inviter: { name: "A" }, invitee: { email: "d@example.com" }, client_id: bare.client_id, send_invitation_email: false });
    expect(viaTenant.invitation_url.startsWith("https://portal.example.com/start?invitation=")).toBe(true);
  });
});

describe("GET and DELETE /organizations/{id}/invitations", () => {
  it("lists newest first, 50 per page by default, with the {invitations, start, limit, length} envelope", async () => {
    const { api, org, path, invite } = await setup();
    const made: Invitation[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(await api.json<Invitation>("POST", path, invite({ send_invitation_email: false, ttl_sec: 1000 * (3 - i) })));
      await tick();
    }
    const ids = (list: Invitation[]) => list.map((i) => i.id);
    expect(ids(await api.json<Invitation[]>("GET", path))).toEqual(ids(made).reverse());
    expect(ids(await api.json<Invitation[]>("GET", `${path}?sort=created_at:1`))).toEqual(ids(made));
    expect(ids(await api.json<Invitation[]>("GET", `${path}?sort=expires_at:1`))).toEqual(ids(made).reverse());
    expect((await api.call("GET", `${path}?sort=invitee:1`)).status).toBe(400);
    const envelope = await api.json<Record<string, unknown>>("GET", `${path}?include_totals=true&per_page=2&page=1`);
    expect(envelope).toEqual({ invitations: [made[0]], start: 2, limit: 2, length: 1 });
    expect(await api.json("GET", `${path}?include_totals=true`)).toMatchObject({ start: 0, limit: 50, length: 3 });
    expect((await api.call("GET", `${path}?per_page=101`)).status).toBe(400);
    const projected = await api.json<Array<Record<string, unknown>>>("GET", `${path}?fields=id,invitee`);
    expect(Object.keys(projected[0] ?? {}).sort()).toEqual(["id", "invitee"]);
    const without = await api.json<Array<Record<string, unknown>>>("GET", `${path}?fields=invitation_url,ticket_id&include_fields=false`);
    expect(without[0]).not.toHaveProperty("invitation_url");
    expect(without[0]).toHaveProperty("inviter");
    expect((await api.call("GET", "/organizations/org_nothing/invitations")).status).toBe(404);
    expect(org.id).toBeTruthy();
  });

  it("reads one invitation and deletes it (then 404)", async () => {
    const { api, path, invite } = await setup();
    const invitation = await api.json<Invitation>("POST", path, invite({ send_invitation_email: false }));
    expect(await api.json("GET", `${path}/${invitation.id}`)).toEqual(invitation);
    expect(await api.json("GET", `${path}/${invitation.id}?fields=id`)).toEqual({ id: invitation.id });
    expect((await api.call("DELETE", `${path}/${invitation.id}`)).status).toBe(204);
    expect(((await (await api.call("GET", `${path}/${invitation.id}`)).json()) as { errorCode: string }).errorCode).toBe("inexistent_invitation");
    expect((await api.call("DELETE", `${path}/${invitation.id}`)).status).toBe(404);
  });

  it("never writes the ticket into the audit log", async () => {
    const { tenantId, api, path, invite } = await setup();
    const invitation = await api.json<Invitation>("POST", path, invite({ send_invitation_email: false }));
    const rows = await tenantSql<{ payload: string }>(tenantId, "SELECT payload FROM outbox WHERE event_type = 'organization_invitation.created'");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.payload).not.toContain(invitation.ticket_id);
  });
});


