import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { pendingLogin, seedClient, type TestClient } from "../helpers/flows";
import { dbConnectionId, drain, postImport } from "../helpers/jobs";
import { createOrg } from "../helpers/organizations";
import { api, createConnection, DB, emailUser, path } from "../helpers/users";

/**
 * Issue 25 point 10: an email address is an addr-spec (src/shared/email-address.ts), never markup, on every
 * way a user or an invitation gets one: sign-up (page, /dbconnections/signup, passwordless), POST and PATCH
 * /users, imports and invitations.
 */

const CALLBACK = "https://app.example.com/callback";
const MARKUP = "x<script>alert(1)</script>@acme.test";
const INVALID = [MARKUP, '"quoted"@acme.test', "Ann <ann@acme.test>", "a\u0007b@acme.test"];
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  await createConnection(tenant, "email", "email");
  // Made after the connection, so it offers it (a connection is created enabled for no existing client).
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

/** The tenant's users with an email (stored addresses, to prove nothing was created). */
async function emails(): Promise<string[]> {
  const res = await api(tenant, "GET", "/users?per_page=100");
  return ((await res.json()) as Array<{ email?: string }>).map((u) => u.email ?? "");
}

describe("email addresses", () => {
  it("the sign-up page refuses an address with markup: 400 INVALID_EMAIL, no user", async () => {
    for (const email of INVALID) {
      const login = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK, screen_hint: "signup" });
      const res = await call(`/u2/signup?state=${login.state}`, {
        method: "POST",
        host,
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: login.cookie },
        body: new URLSearchParams({ _csrf: login.csrf, email, password: "password-123" }).toString(),
      });
      expect(res.status, email).toBe(400);
      expect(/data-error-code="([A-Z_]+)"/.exec(await res.text())?.[1]).toBe("INVALID_EMAIL");
    }
    expect((await emails()).filter((e) => e.includes("acme.test"))).toEqual([]);
  });

  it("/dbconnections/signup refuses it: 400 invalid_request", async () => {
    const res = await call("/dbconnections/signup", {
      method: "POST",
      host,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, connection: DB, email: MARKUP, password: "password-123" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid_request", error_description: "email is not a valid email address" });
  });

  it("/passwordless/start refuses it: 400 invalid_request", async () => {
    const res = await call("/passwordless/start", {
      method: "POST",
      host,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret, connection: "email", email: MARKUP, send: "code" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request", error_description: "email is not a valid email address" });
  });

  it("POST /users and PATCH /users/{id} refuse it: 400 invalid_body naming the field", async () => {
    for (const email of INVALID) {
      const res = await api(tenant, "POST", "/users", { connection: "email", email });
      expect(res.status, email).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ statusCode: 400, error: "Bad Request", errorCode: "invalid_body" });
      expect(String(body.message)).toContain("email");
    }
    const user = await emailUser(tenant, "plain@acme.example");
    const patched = await api(tenant, "PATCH", path(user.user_id), { email: MARKUP });
    expect(patched.status).toBe(400);
    expect(await patched.json()).toMatchObject({ statusCode: 400, error: "Bad Request", errorCode: "invalid_body" });
    expect(((await (await api(tenant, "GET", path(user.user_id))).json()) as { email: string }).email).toBe("plain@acme.example");
  });

  it("an import refuses the row (INVALID_FORMAT at #/email) and imports the others", async () => {
    const res = await postImport(tenant, { connection_id: await dbConnectionId(tenant) }, [{ email: MARKUP }, { email: "fine@acme.example" }]);
    expect(res.status).toBe(201);
    const job = await drain(tenant, String(((await res.json()) as { id: string }).id));
    expect(job).toMatchObject({ status: "completed", summary: { inserted: 1, failed: 1, total: 2 } });
    const errors = (await (await api(tenant, "GET", `/jobs/${job.id}/errors`)).json()) as Array<{ user: { email: string }; errors: Array<{ code: string; path: string }> }>;
    expect(errors).toEqual([{ user: { email: MARKUP }, errors: [expect.objectContaining({ code: "INVALID_FORMAT", path: "#/email" })] }]);
  });

  it("an invitation refuses it: 400 naming invitee.email", async () => {
    const org = await createOrg(tenant);
    for (const email of INVALID) {
      const res = await mgmt("POST", `/organizations/${org.id}/invitations`, {
        headers: { "tenant-id": tenant },
        body: { inviter: { name: "Ann" }, invitee: { email }, client_id: client.client_id },
      });
      expect(res.status, email).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ statusCode: 400, error: "Bad Request" });
      expect(String(body.message)).toContain("invitee.email must be an email address");
    }
  });
});
