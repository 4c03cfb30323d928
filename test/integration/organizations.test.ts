import { describe, expect, it } from "vitest";
import { mgmt, uniqueId } from "../helpers/api";
import { seedClient, seedUser } from "../helpers/flows";
import { tick } from "../helpers/management";
import { createOrg, databaseConnectionId, freshTenant, type OrgBody, orgWithMembers } from "../helpers/organizations";
import { logsOf, relay, tenantSql } from "../helpers/outbox";

type ErrorBody = { statusCode: number; message: string; errorCode: string };
const failure = async (res: Response) => ({ status: res.status, ...((await res.json()) as ErrorBody) });

describe("organizations CRUD (SPEC §2.6, §4.2)", () => {
  it("creates an organization in the reference platform's shape and reads it by id and by name", async () => {
    const { api } = await freshTenant();
    const body = {
      name: "acme-corp_1",
      display_name: "Acme Corp ✓",
      branding: { logo_url: "https://cdn.example.com/acme.png", colors: { primary: "#112233", page_background: "#fafafa" } },
      metadata: { tier: "gold" },
      token_quota: { client_credentials: { enforce: true, per_day: 1000, per_hour: 100 } },
    };
    const created = await api.json<OrgBody>("POST", "/organizations", body);
    expect(created).toMatchObject({ ...body, id: expect.stringMatching(/^org_[A-Za-z0-9]{16}$/) });
    expect(created.enabled_connections).toBeUndefined();
    expect(await api.json("GET", `/organizations/${created.id}`)).toEqual(created);
    expect(await api.json("GET", "/organizations/name/acme-corp_1")).toEqual(created);
    expect((await failure(await api.call("GET", "/organizations/name/nobody"))).errorCode).toBe("inexistent_organization");
  });

  it("creates with enabled connections and answers them in the created organization", async () => {
    const { tenantId, api } = await freshTenant();
    const connectionId = await databaseConnectionId(tenantId);
    const created = await api.json<OrgBody>("POST", "/organizations", {
      name: "with-conn",
      enabled_connections: [{ connection_id: connectionId, assign_membership_on_login: true }],
    });
    expect(created.enabled_connections).toEqual([
      {
        connection_id: connectionId,
        assign_membership_on_login: true,
        show_as_button: true,
        is_signup_enabled: false,
        connection: { name: "Username-Password-Authentication", strategy: "auth0" },
      },
    ]);
    const missing = await api.call("POST", "/organizations", { name: "bad-conn", enabled_connections: [{ connection_id: "con_nothing" }] });
    expect(missing.status).toBe(404);
    expect((await api.call("GET", "/organizations/name/bad-conn")).status).toBe(404);
  });

  it("refuses a taken name with 409 and bad input with a clear 400, writing nothing", async () => {
    const { tenantId, api } = await freshTenant();
    await createOrg(tenantId, { name: "taken" });
    expect(await failure(await api.call("POST", "/organizations", { name: "taken" }))).toMatchObject({ status: 409, errorCode: "organization_conflict" });
    const bad: unknown[] = [
      {},
      { name: "" },
      { name: "Upper" },
      { name: "has space" },
      { name: "x".repeat(51) },
      { name: "ünïcode" },
      { name: 42 },
      { name: "ok", extra: true },
      { name: "ok", metadata: { a: 1 } },
      { name: "ok", metadata: { a: "x".repeat(256) } },
      { name: "ok", metadata: Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, "v"])) },
      { name: "ok", branding: { colors: { primary: "red", page_background: "#fff" } } },
      { name: "ok", branding: { logo_url: "javascript:alert(1)" } },
      { name: "ok", display_name: "" },
      [],
    ];
    for (const body of bad) {
      const res = await api.call("POST", "/organizations", body);
      const answer = await failure(res);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.message).toMatch(/Payload validation error|Request body/);
    }
    const malformed = await mgmt("POST", "/organizations", { headers: { "tenant-id": tenantId }, body: "{not json" });
    expect(await failure(malformed)).toMatchObject({ status: 400, errorCode: "invalid_body" });
    const all = await api.json<OrgBody[]>("GET", "/organizations");
    expect(all.map((o) => o.name)).toEqual(["taken"]);
  });

  it("PATCH replaces fields, merges metadata (null removes a key), clears with null and keeps names unique", async () => {
    const { tenantId, api } = await freshTenant();
    const org = await createOrg(tenantId, { display_name: "Before", metadata: { a: "1", b: "2" }, branding: { logo_url: "https://x.example/l.png" } });
    await createOrg(tenantId, { name: "other-name" });
    const patched = await api.json<OrgBody>("PATCH", `/organizations/${org.id}`, { display_name: "After", metadata: { b: null, c: "3" } });
    expect(patched).toMatchObject({ id: org.id, name: org.name, display_name: "After", metadata: { a: "1", c: "3" }, branding: org.branding });
    const cleared = await api.json<OrgBody>("PATCH", `/organizations/${org.id}`, { display_name: null, branding: null, name: "renamed" });
    expect(cleared.display_name).toBeUndefined();
    expect(cleared.branding).toBeUndefined();
    expect(cleared.name).toBe("renamed");
    expect((await failure(await api.call("PATCH", `/organizations/${org.id}`, { name: "other-name" }))).status).toBe(409);
    expect((await failure(await api.call("PATCH", `/organizations/${org.id}`, { id: "org_x" }))).status).toBe(400);
    expect((await failure(await api.call("PATCH", "/organizations/org_nothing", { display_name: "x" }))).status).toBe(404);
  });

  it("DELETE of an unknown organization is 404; deleting one removes its members, invitations and connection links", async () => {
    const { tenantId, api } = await freshTenant();
    expect(await failure(await api.call("DELETE", "/organizations/org_0000000000000000"))).toMatchObject({ status: 404, errorCode: "inexistent_organization" });
    const { org, users } = await orgWithMembers(tenantId, 2);
    const client = await seedClient(tenantId);
    await api.json("POST", `/organizations/${org.id}/invitations`, { inviter: { name: "Ann" }, invitee: { email: "new@example.com" }, client_id: client.client_id, send_invitation_email: false });
    expect((await api.call("DELETE", `/organizations/${org.id}`)).status).toBe(204);
    expect((await api.call("GET", `/organizations/${org.id}`)).status).toBe(404);
    expect((await api.call("GET", `/organizations/${org.id}/members`)).status).toBe(404);
    for (const table of ["organization_members", "organization_invitations", "organization_connections"]) {
      expect(await tenantSql(tenantId, `SELECT * FROM ${table} WHERE organization_id = ?`, org.id), table).toEqual([]);
    }
    // The users themselves stay.
    expect((await api.call("GET", `/users/${encodeURIComponent(users[0]?.user_id as string)}`)).status).toBe(200);
  });

  it("records organization.created, .updated and .deleted as sapi log events with the caller", async () => {
    const { tenantId, api } = await freshTenant();
    const org = await createOrg(tenantId);
    await api.json("PATCH", `/organizations/${org.id}`, { display_name: "D" });
    await api.call("DELETE", `/organizations/${org.id}`);
    await relay(tenantId);
    const logs = await logsOf(tenantId, "?q=type:sapi");
    const descriptions = logs.map((l) => l.description);
    for (const action of ["created", "updated", "deleted"]) expect(descriptions).toContain(`organization ${action}`);
    const created = logs.find((l) => l.description === "organization created") as unknown as { details: Record<string, unknown> };
    expect(created.details).toMatchObject({ actor: { type: "client" }, target: { type: "organization", id: org.id } });
  });
});

describe("GET /organizations paging (SPEC §4.3, §8)", () => {
  it("pages 10 by default, caps per_page at 100 and answers the totals envelope", async () => {
    const { tenantId, api } = await freshTenant();
    for (let i = 0; i < 12; i++) await createOrg(tenantId, { name: `o-${String(i).padStart(2, "0")}` });
    expect(await api.json<OrgBody[]>("GET", "/organizations")).toHaveLength(10);
    expect(await api.json<OrgBody[]>("GET", "/organizations?page=1")).toHaveLength(2);
    expect(await api.json<OrgBody[]>("GET", "/organizations?per_page=100")).toHaveLength(12);
    expect((await api.call("GET", "/organizations?per_page=101")).status).toBe(400);
    expect((await api.call("GET", "/organizations?per_page=0")).status).toBe(400);
    const envelope = await api.json<Record<string, unknown>>("GET", "/organizations?include_totals=true&per_page=5&page=2");
    expect(envelope).toMatchObject({ start: 10, limit: 5, total: 12 });
    expect(envelope.organizations).toHaveLength(2);
  });

  it("sorts by name ascending and descending, newest first by default, and refuses other sorts", async () => {
    const { tenantId, api } = await freshTenant();
    for (const name of ["bravo", "alpha", "charlie"]) {
      await createOrg(tenantId, { name });
      await tick();
    }
    const names = async (query: string) => (await api.json<OrgBody[]>("GET", `/organizations${query}`)).map((o) => o.name);
    expect(await names("")).toEqual(["charlie", "alpha", "bravo"]);
    expect(await names("?sort=name:1")).toEqual(["alpha", "bravo", "charlie"]);
    expect(await names("?sort=name:-1")).toEqual(["charlie", "bravo", "alpha"]);
    expect(await names("?sort=created_at:1")).toEqual(["bravo", "alpha", "charlie"]);
    expect((await failure(await api.call("GET", "/organizations?sort=metadata:1"))).status).toBe(400);
  });

  it("filters with q on name, display_name and metadata, and refuses an unknown field", async () => {
    const { tenantId, api } = await freshTenant();
    await createOrg(tenantId, { name: "acme-east", display_name: "Acme East", metadata: { region: "eu" } });
    await createOrg(tenantId, { name: "acme-west", metadata: { region: "us" } });
    await createOrg(tenantId, { name: "globex" });
    const names = async (q: string) => (await api.json<OrgBody[]>("GET", `/organizations?sort=name:1&q=${encodeURIComponent(q)}`)).map((o) => o.name);
    expect(await names("acme")).toEqual(["acme-east", "acme-west"]);
    expect(await names("name:globex")).toEqual(["globex"]);
    expect(await names("metadata.region:eu")).toEqual(["acme-east"]);
    expect(await names('display_name:"Acme East"')).toEqual(["acme-east"]);
    expect((await api.call("GET", "/organizations?q=secret:1")).status).toBe(400);
  });

  it("walks every organization with checkpoint paging: {organizations, next}, no next on the last page", async () => {
    const { tenantId, api } = await freshTenant();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await createOrg(tenantId)).id);
    const seen: string[] = [];
    let query = "?take=2";
    for (let pages = 0; pages < 10; pages++) {
      const page = await api.json<{ organizations: OrgBody[]; next?: string }>("GET", `/organizations${query}`);
      seen.push(...page.organizations.map((o) => o.id));
      if (!page.next) break;
      query = `?take=2&from=${encodeURIComponent(page.next)}`;
    }
    expect(seen.sort()).toEqual([...made].sort());
    expect((await api.call("GET", "/organizations?from=garbage")).status).toBe(400);
    // SDKs send include_totals with checkpoint parameters: it is ignored.
    const sdk = await api.json<{ organizations: OrgBody[]; next?: string }>("GET", "/organizations?include_totals=true&take=50");
    expect(sdk.organizations).toHaveLength(5);
    expect(sdk.next).toBeUndefined();
  });
});

describe("enabled connections (issue 11 point 3)", () => {
  it("enables, reads, updates, lists and disables a connection", async () => {
    const { tenantId, api } = await freshTenant();
    const org = await createOrg(tenantId);
    const connectionId = await databaseConnectionId(tenantId);
    const path = `/organizations/${org.id}/enabled_connections`;
    const added = await api.json("POST", path, { connection_id: connectionId, show_as_button: false });
    expect(added).toEqual({
      connection_id: connectionId,
      assign_membership_on_login: false,
      show_as_button: false,
      is_signup_enabled: false,
      connection: { name: "Username-Password-Authentication", strategy: "auth0" },
    });
    expect(await failure(await api.call("POST", path, { connection_id: connectionId }))).toMatchObject({ status: 409 });
    expect((await api.call("POST", path, { connection_id: "con_missing" })).status).toBe(404);
    expect((await api.call("POST", path, {})).status).toBe(400);
    expect(await api.json("GET", `${path}/${connectionId}`)).toEqual(added);
    const updated = await api.json("PATCH", `${path}/${connectionId}`, { assign_membership_on_login: true, is_signup_enabled: true });
    expect(updated).toMatchObject({ assign_membership_on_login: true, is_signup_enabled: true, show_as_button: false });
    expect((await api.call("PATCH", `${path}/${connectionId}`, { connection_id: "x" })).status).toBe(400);
    expect(await api.json("GET", path)).toEqual([updated]);
    expect(await api.json("GET", `${path}?include_totals=true`)).toEqual({ enabled_connections: [updated], start: 0, limit: 50, length: 1, total: 1 });
    expect((await api.call("DELETE", `${path}/${connectionId}`)).status).toBe(204);
    expect(await failure(await api.call("GET", `${path}/${connectionId}`))).toMatchObject({ status: 404, errorCode: "inexistent_organization_connection" });
    expect((await api.call("DELETE", `${path}/${connectionId}`)).status).toBe(404);
    expect((await api.call("GET", `/organizations/org_nothing/enabled_connections`)).status).toBe(404);
  });

  it("deleting a connection removes it from every organization", async () => {
    const { tenantId, api } = await freshTenant();
    const conn = await api.json<{ id: string }>("POST", "/connections", { name: "staff", strategy: "auth0" });
    const org = await createOrg(tenantId, { enabled_connections: [{ connection_id: conn.id }] });
    expect((await api.call("DELETE", `/connections/${conn.id}`)).status).toBe(204);
    expect(await api.json("GET", `/organizations/${org.id}/enabled_connections`)).toEqual([]);
  });
});

describe("members (issue 11 point 2)", () => {
  it("adds, lists (offset and checkpoint) and removes members, joined to the users' profiles", async () => {
    const { tenantId, api } = await freshTenant();
    const org = await createOrg(tenantId);
    const users = [];
    for (let i = 0; i < 3; i++) {
      users.push(await seedUser(tenantId, `${uniqueId("m")}@example.com`));
    }
    const path = `/organizations/${org.id}/members`;
    for (const user of users) {
      expect((await api.call("POST", path, { members: [user.user_id] })).status).toBe(204);
      await tick();
    }
    // Adding an existing member again is not an error.
    expect((await api.call("POST", path, { members: [users[0]?.user_id] })).status).toBe(204);
    const listed = await api.json<Array<Record<string, unknown>>>("GET", path);
    expect(listed.map((m) => m.user_id)).toEqual(users.map((u) => u.user_id).reverse());
    expect(listed[0]).toEqual({ user_id: users[2]?.user_id, email: users[2]?.email, name: users[2]?.name });
    expect(await api.json("GET", `${path}?include_totals=true&per_page=1`)).toMatchObject({ start: 0, limit: 1, total: 3 });
    const first = await api.json<{ members: Array<{ user_id: string }>; next?: string }>("GET", `${path}?take=2`);
    expect(first.members).toHaveLength(2);
    const second = await api.json<{ members: Array<{ user_id: string }>; next?: string }>("GET", `${path}?take=2&from=${encodeURIComponent(first.next as string)}`);
    expect(second.members.map((m) => m.user_id)).toEqual([users[0]?.user_id]);
    expect(second.next).toBeUndefined();
    const projected = await api.json<Array<Record<string, unknown>>>("GET", `${path}?fields=user_id,email&include_fields=true`);
    expect(Object.keys(projected[0] ?? {}).sort()).toEqual(["email", "user_id"]);

    expect((await api.call("DELETE", path, { members: [users[1]?.user_id] })).status).toBe(204);
    expect((await api.json<Array<{ user_id: string }>>("GET", path)).map((m) => m.user_id)).toEqual([users[2]?.user_id, users[0]?.user_id]);
  });

  it("refuses unknown users and organizations, empty lists and bad bodies", async () => {
    const { tenantId, api } = await freshTenant();
    const org = await createOrg(tenantId);
    const path = `/organizations/${org.id}/members`;
    expect(await failure(await api.call("POST", path, { members: ["auth0|nobody"] }))).toMatchObject({ status: 404, errorCode: "inexistent_user" });
    expect((await api.call("POST", path, { members: [] })).status).toBe(400);
    expect((await api.call("POST", path, { members: "auth0|x" })).status).toBe(400);
    expect((await api.call("POST", path, {})).status).toBe(400);
    expect((await api.call("POST", "/organizations/org_nothing/members", { members: ["auth0|x"] })).status).toBe(404);
    expect(await api.json("GET", path)).toEqual([]);
  });

  it("GET /users/{id}/organizations lists the user's organizations; a deleted membership or organization drops out", async () => {
    const { tenantId, api } = await freshTenant();
    const { org: a, users } = await orgWithMembers(tenantId, 1);
    const user = users[0]?.user_id as string;
    const b = await createOrg(tenantId);
    await api.json("POST", `/organizations/${b.id}/members`, { members: [user] }, 204);
    const path = `/users/${encodeURIComponent(user)}/organizations`;
    expect((await api.json<OrgBody[]>("GET", path)).map((o) => o.id).sort()).toEqual([a.id, b.id].sort());
    expect(await api.json("GET", `${path}?include_totals=true`)).toMatchObject({ start: 0, limit: 50, total: 2 });
    expect(await api.json("GET", `${path}?include_totals=true&per_page=1`)).toMatchObject({ start: 0, limit: 1, total: 2 });
    await api.call("DELETE", `/organizations/${a.id}`);
    expect((await api.json<OrgBody[]>("GET", path)).map((o) => o.id)).toEqual([b.id]);
    expect((await api.call("GET", "/users/auth0%7Cnobody/organizations")).status).toBe(404);
  });

  it("lists 50 members per page by default; fields=roles needs read:organization_member_roles", async () => {
    const { tenantId, api } = await freshTenant();
    const { org, users } = await orgWithMembers(tenantId, 1);
    const path = `/organizations/${org.id}/members`;
    expect(await api.json("GET", `${path}?include_totals=true`)).toMatchObject({ start: 0, limit: 50, total: 1 });
    expect((await api.call("GET", `${path}?per_page=101`)).status).toBe(400);
    const withRoles = await api.json<Array<Record<string, unknown>>>("GET", `${path}?fields=user_id,roles`);
    expect(withRoles).toEqual([{ user_id: users[0]?.user_id, roles: [] }]);
    const { tenantManagementToken } = await import("../helpers/management");
    const token = await tenantManagementToken(tenantId, ["read:organization_members"]);
    const denied = await mgmt("GET", `${path}?fields=roles`, { token, host: `${tenantId}.localhost:8787` });
    expect(denied.status).toBe(403);
    expect((await mgmt("GET", path, { token, host: `${tenantId}.localhost:8787` })).status).toBe(200);
  });

  it("a member's roles: 404 for a user who is not a member, an empty list (50 per page) for a member", async () => {
    const { tenantId, api } = await freshTenant();
    const { org, users } = await orgWithMembers(tenantId, 1);
    const outsider = await seedUser(tenantId, `${uniqueId("o")}@example.com`);
    const rolesOf = (userId: string) => `/organizations/${org.id}/members/${encodeURIComponent(userId)}/roles`;
    expect(await failure(await api.call("GET", rolesOf(outsider.user_id)))).toMatchObject({ status: 404, errorCode: "inexistent_organization_member" });
    expect(await api.json("GET", rolesOf(users[0]?.user_id as string))).toEqual([]);
    expect(await api.json("GET", `${rolesOf(users[0]?.user_id as string)}?include_totals=true`)).toMatchObject({ roles: [], start: 0, limit: 50, total: 0 });
    expect((await api.call("POST", rolesOf(users[0]?.user_id as string), { roles: [] })).status).toBe(400);
  });

  it("deleting a user removes their memberships", async () => {
    const { tenantId, api } = await freshTenant();
    const { org, users } = await orgWithMembers(tenantId, 2);
    await tenantSql(tenantId, "DELETE FROM users WHERE user_id = ?", users[0]?.user_id as string);
    expect((await api.json<Array<{ user_id: string }>>("GET", `/organizations/${org.id}/members`)).map((m) => m.user_id)).toEqual([users[1]?.user_id]);
    // The membership row itself is gone (trigger on users), not merely hidden by the join.
    expect(await tenantSql(tenantId, "SELECT user_id FROM organization_members WHERE organization_id = ?", org.id)).toEqual([{ user_id: users[1]?.user_id }]);
  });
});

