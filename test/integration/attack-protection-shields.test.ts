import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { seedClient, seedUser, type TestClient } from "../helpers/flows";

/** Brute-force protection's `shields` (the reference platform's): the lockout blocks only with `block`. */

const ORIGIN = "https://app.example.com";
const PASSWORD = "right-password-1";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { web_origins: [ORIGIN] });
});

const admin = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenant }, body });
const login = (username: string, password: string) =>
  call("/co/authenticate", {
    method: "POST",
    host,
    headers: { "content-type": "application/json", origin: ORIGIN, "cf-connecting-ip": "10.9.8.7" },
    body: JSON.stringify({ client_id: client.client_id, username, password, credential_type: "password" }),
  });

describe("brute-force protection shields", () => {
  it("without the block shield failures lock nobody; with it back, the third failure locks", async () => {
    const email = (await seedUser(tenant, `sh-${crypto.randomUUID().slice(0, 8)}@example.com`, PASSWORD)).email as string;
    expect((await admin("PATCH", "/attack-protection/brute-force-protection", { shields: ["user_notification"] })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login(email, "wrong-guess-00")).status).toBe(403);
    expect((await login(email, PASSWORD)).status).toBe(200);

    expect((await admin("PATCH", "/attack-protection/brute-force-protection", { shields: ["block"] })).status).toBe(200);
    const other = (await seedUser(tenant, `sh-${crypto.randomUUID().slice(0, 8)}@example.com`, PASSWORD)).email as string;
    for (let i = 0; i < 3; i++) await login(other, "wrong-guess-00");
    const locked = await login(other, PASSWORD);
    expect(locked.status).toBe(403);
    expect(((await locked.json()) as { error_description: string }).error_description).toMatch(/Too many failed login attempts/);
  });
});
