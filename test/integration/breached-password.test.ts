import { describe, expect, it } from "vitest";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, seedUser } from "../helpers/flows";
import { TestBrowser } from "../helpers/mfa";

/**
 * Issue 28 point 1: breached-password detection checks sign-ups and password changes against the bundled list
 * of common breached passwords, refuses them when the stage's `block` shield is on, and logs why
 * (`signup_pwd_leak`, `reset_pwd_leak`) so an admin can read it.
 */

const detection = (tenant: string, body: unknown) => mgmt("PATCH", "/attack-protection/breached-password-detection", { headers: { "tenant-id": tenant }, body });
const signup = (tenant: string, clientId: string, password: string, email = `${uniqueId("u")}@example.com`) =>
  call("/dbconnections/signup", {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email, password, connection: "Username-Password-Authentication" }),
  });
const logsOfType = async (tenant: string, type: string) =>
  (await (await mgmt("GET", `/logs?q=${encodeURIComponent(`type:${type}`)}`, { headers: { "tenant-id": tenant } })).json()) as { type: string; description: string; client_id: string | null }[];

describe("breached-password detection at sign-up", () => {
  it("lets a breached password through while detection is off (the default)", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, {});
    expect((await signup(tenant, client.client_id, "password123")).status).toBe(200);
  });

  it("refuses a breached password (any case) with invalid_password and logs signup_pwd_leak; a strong one passes", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, {});
    expect((await detection(tenant, { enabled: true, stage: { "pre-user-registration": { shields: ["block"] } } })).status).toBe(200);
    const email = `${uniqueId("leak")}@example.com`;
    const refused = await signup(tenant, client.client_id, "Password123", email);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { code: string; description: string };
    expect(body.code).toBe("invalid_password");
    expect(body.description).toContain("data breach");
    const users = (await (await mgmt("GET", `/users-by-email?email=${encodeURIComponent(email)}`, { headers: { "tenant-id": tenant } })).json()) as unknown[];
    expect(users).toEqual([]);
    const [logged] = await logsOfType(tenant, "signup_pwd_leak");
    expect(logged).toMatchObject({ type: "signup_pwd_leak", client_id: client.client_id });
    expect(logged?.description).toContain(`Blocked sign-up with a breached password (${email}`);
    expect((await signup(tenant, client.client_id, "Unlisted-Gatehouse-7Qz!")).status).toBe(200);
  });

  it("with admin_notification only, the sign-up succeeds and the event is still logged", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, {});
    await detection(tenant, { enabled: true, stage: { "pre-user-registration": { shields: ["admin_notification"] } } });
    expect((await signup(tenant, client.client_id, "football1")).status).toBe(200);
    const [logged] = await logsOfType(tenant, "signup_pwd_leak");
    expect(logged?.description).toContain("Allowed sign-up with a breached password");
  });
});

describe("breached-password detection at a password change", () => {
  it("the reset page refuses a breached password under pre-change-password block and logs reset_pwd_leak", async () => {
    const tenant = await createTenant();
    const email = `${uniqueId("r")}@example.com`;
    const user = await seedUser(tenant, email, "Unlisted-Gatehouse-7Qz!");
    await detection(tenant, { enabled: true, stage: { "pre-change-password": { shields: ["block"] } } });
    const ticketRes = await mgmt("POST", "/tickets/password-change", { headers: { "tenant-id": tenant }, body: { user_id: user.user_id } });
    expect(ticketRes.status).toBe(201);
    const ticket = new URL(((await ticketRes.json()) as { ticket: string }).ticket).searchParams.get("ticket") as string;
    const browser = new TestBrowser(`${tenant}.localhost:8787`);
    const refused = await browser.post("/u2/reset-password/change", { ticket, password: "sunshine1", password_confirm: "sunshine1" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("data breach");
    const [logged] = await logsOfType(tenant, "reset_pwd_leak");
    expect(logged?.description).toContain("Blocked password change with a breached password");
    const done = await browser.post("/u2/reset-password/change", { ticket, password: "An0ther-Unlisted-pw!", password_confirm: "An0ther-Unlisted-pw!" });
    expect(done.status).toBe(200);
  });
});
