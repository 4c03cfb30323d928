import { env } from "cloudflare:test";
import bcrypt from "bcryptjs";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, uniqueId } from "../helpers/api";
import { pendingLogin, seedClient, type TestClient } from "../helpers/flows";
import { dbConnectionId, drain, postImport } from "../helpers/jobs";
import { logsOf, relay } from "../helpers/outbox";
import { api, DB } from "../helpers/users";

/**
 * Issue 25 point 7: a bcrypt hash's cost is the CPU one login attempt spends, so imports refuse costs above
 * 12 per row and the login never verifies a stored hash above the cap (fail closed, an `fp` log saying why).
 */

const CALLBACK = "https://app.example.com/callback";
/** bcryptjs.hashSync("Costly-Pw-13", 13), computed once outside the test (about 0.7 s of CPU). */
const COST_13 = "$2b$13$3Gzm/i6hlI7jEWA1KNpo.eQdkrIGNpfu.z6pbiN0o2pzwg.Clfbym";
const COST_13_PASSWORD = "Costly-Pw-13";

let tenant: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

describe("bcrypt cost cap", () => {
  it("an import refuses each row whose bcrypt cost is above 12 (password_hash or custom_password_hash), with the row's error", async () => {
    const costly = COST_13.replace("$13$", "$31$");
    const file = [
      { email: "cost13@example.com", password_hash: COST_13 },
      { email: "cost31@example.com", custom_password_hash: { algorithm: "bcrypt", hash: { value: costly, encoding: "utf8" } } },
      { email: "cost4@example.com", password_hash: bcrypt.hashSync("Cheap-Pw-4", 4) },
    ];
    const res = await postImport(tenant, { connection_id: await dbConnectionId(tenant) }, file);
    expect(res.status, await res.clone().text()).toBe(201);
    const job = await drain(tenant, String(((await res.json()) as { id: string }).id));
    expect(job).toMatchObject({ status: "completed", summary: { inserted: 1, failed: 2, total: 3 } });

    const errors = (await (await api(tenant, "GET", `/jobs/${job.id}/errors`)).json()) as Array<{ user: { email: string }; errors: Array<Record<string, string>> }>;
    const byEmail = new Map(errors.map((e) => [e.user.email, e.errors]));
    expect(byEmail.get("cost13@example.com")).toEqual([
      { code: "INVALID_FORMAT", message: "The bcrypt cost 13 exceeds the maximum of 12: rehash with a cost of 12 or less", path: "#/password_hash" },
    ]);
    expect(byEmail.get("cost31@example.com")?.[0]).toMatchObject({ code: "INVALID_FORMAT", path: "#/custom_password_hash/hash/value" });
    expect(byEmail.get("cost31@example.com")?.[0]?.message).toContain("bcrypt cost 31");
    expect((await (await api(tenant, "GET", "/users-by-email?email=cost13%40example.com")).json()) as unknown[]).toEqual([]);
  });

  it("a stored hash above the cap is never verified: the right password fails closed and the fp log says why", async () => {
    const email = `${uniqueId("costly")}@example.com`;
    // A hash stored before the cap (an older import): written straight through the object, as the import did.
    const created = await env.TENANT.getByName(tenant).users().create({ user_id: `auth0|${uniqueId("c")}`, connection: DB, email, email_verified: true, password_hash: COST_13 });
    if (!created.ok) throw new Error(created.error.code);

    const pending = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK });
    const res = await call(`/u2/login?state=${pending.state}`, {
      method: "POST",
      host: `${tenant}.localhost:8787`,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie },
      body: new URLSearchParams({ _csrf: pending.csrf, email, password: COST_13_PASSWORD }).toString(),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Wrong email or password.");

    await relay(tenant);
    const logs = await logsOf(tenant, `?q=${encodeURIComponent(`type:fp AND user_id:"${created.value.user_id}"`)}`);
    expect(logs).toHaveLength(1);
    expect(logs[0]?.description).toBe(
      "Failed login: the stored password hash has bcrypt cost 13, above the maximum of 12, so it was not verified; reset the user's password",
    );
  });
});
