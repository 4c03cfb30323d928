import { describe, expect, it } from "vitest";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, seedUser } from "../helpers/flows";
import { passwordLogin, TestBrowser } from "../helpers/mfa";

/**
 * Issue 28 point 1: breached-password detection checks sign-ups and password changes against the bundled list
 * of common breached passwords, refuses them when the stage's `block` shield is on, and logs why
 * (`signup_pwd_leak`, `reset_pwd_leak`) so an admin can read it. Also a management password change
 * (PATCH /users/{id}, the pre-change-password stage) and a login (the top-level shields, `pwd_leak`).
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
    // The day's stats count the breached password met (GET /stats/daily `leaked_passwords`) and the one sign-up.
    const days = (await (await mgmt("GET", "/stats/daily", { headers: { "tenant-id": tenant } })).json()) as { leaked_passwords: number; signups: number }[];
    expect(days).toHaveLength(1);
    expect(days[0]).toMatchObject({ leaked_passwords: 1, signups: 1 });
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

describe("breached-password detection on PATCH /users/{id} with a password", () => {
  it("refuses a breached password under pre-change-password block (400 password_leaked, password unchanged); notification only lets it through, logged", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, { callbacks: ["https://app.example.com/cb"] });
    const email = `${uniqueId("p")}@example.com`;
    const user = await seedUser(tenant, email, "Unlisted-Gatehouse-7Qz!");
    const patch = (password: string) => mgmt("PATCH", `/users/${encodeURIComponent(user.user_id)}`, { headers: { "tenant-id": tenant }, body: { password } });
    await detection(tenant, { enabled: true, stage: { "pre-change-password": { shields: ["block"] } } });
    const refused = await patch("Password123");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ statusCode: 400, errorCode: "password_leaked", message: expect.stringContaining("data breach") });
    const [logged] = await logsOfType(tenant, "reset_pwd_leak");
    expect(logged?.description).toContain(`Blocked password change with a breached password (${email}`);
    // The old password still signs in: nothing was stored.
    expect((await passwordLogin(tenant, client.client_id, email, "Unlisted-Gatehouse-7Qz!")).res.status).toBe(302);
    await detection(tenant, { enabled: true, stage: { "pre-change-password": { shields: ["admin_notification"] } } });
    expect((await patch("Password123")).status).toBe(200);
    expect((await logsOfType(tenant, "reset_pwd_leak")).map((l) => l.description)).toContainEqual(expect.stringContaining("Allowed password change"));
  });
});

describe("breached-password detection at login", () => {
  it("block refuses a correct but breached password (login page and /co/authenticate password_leaked) and logs pwd_leak; user_notification lets it in, logged", async () => {
    const tenant = await createTenant();
    const origin = "https://app.example.com";
    const client = await seedClient(tenant, { callbacks: [`${origin}/cb`], web_origins: [origin] });
    const email = `${uniqueId("l")}@example.com`;
    await seedUser(tenant, email, "iloveyou");
    expect((await passwordLogin(tenant, client.client_id, email, "iloveyou")).res.status).toBe(302);
    await detection(tenant, { enabled: true, shields: ["block"] });

    const page = await passwordLogin(tenant, client.client_id, email, "iloveyou");
    expect(page.res.status).toBe(403);
    expect(await page.res.text()).toContain("data breach");
    const co = await call("/co/authenticate", {
      method: "POST",
      host: `${tenant}.localhost:8787`,
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ client_id: client.client_id, credential_type: "http://auth0.com/oauth/grant-type/password-realm", username: email, password: "iloveyou", realm: "Username-Password-Authentication" }),
    });
    expect(co.status).toBe(403);
    expect(await co.json()).toMatchObject({ error: "password_leaked", error_description: expect.stringContaining("data breach") });
    const blocked = await logsOfType(tenant, "pwd_leak");
    expect(blocked).toHaveLength(2);
    expect(blocked[0]).toMatchObject({ type: "pwd_leak", client_id: client.client_id, description: expect.stringContaining(`Blocked login with a breached password (${email}`) });
    // A wrong password is a wrong password (fp), never a breach verdict: only a proven password is checked.
    expect((await passwordLogin(tenant, client.client_id, email, "password1")).res.status).toBe(403);
    expect(await logsOfType(tenant, "pwd_leak")).toHaveLength(2);

    await detection(tenant, { enabled: true, shields: ["user_notification", "admin_notification"] });
    expect((await passwordLogin(tenant, client.client_id, email, "iloveyou")).res.status).toBe(302);
    expect((await logsOfType(tenant, "pwd_leak")).map((l) => l.description)).toContainEqual(expect.stringContaining("Allowed login with a breached password"));
  });
});
