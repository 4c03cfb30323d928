import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { pendingLogin, seedClient, seedUser, type TestClient } from "../helpers/flows";
import { relay, tenantSql } from "../helpers/outbox";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

const PASSWORD = "correct-horse-9";
const CALLBACK = "https://app.example.com/callback";
const DAY = 86_400_000;
let tenant: string;
let client: TestClient;
let kit: ReachKit;

const asTenant = (t: string) => ({ headers: { "tenant-id": t } });
const yyyymmdd = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll("-", "");

async function login(email: string, password: string): Promise<Response> {
  const pending = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK });
  return call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password }).toString(),
  });
}

/** A past log row (the API cannot make events in the past): only the date, type and user matter here. */
const pastLog = (date: number, type: string, userId: string | null) =>
  tenantSql(tenant, "INSERT INTO logs (log_id, date, type, event_type, user_id) VALUES (?, ?, ?, 'test', ?)", uniqueId("log"), date, type, userId);

beforeAll(async () => {
  tenant = await createTenant();
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  kit = await reachKit(["read:stats"], tenant);
});

describe("GET /stats/daily and /stats/active-users (issue 30), counted from the tenant's logs", () => {
  it("counts real logins, sign-ups and failed logins of today in the reference shape", async () => {
    const email = `${uniqueId("u")}@example.com`;
    await seedUser(tenant, email, PASSWORD);
    expect((await login(email, PASSWORD)).status).toBe(302);
    expect((await login(email, PASSWORD)).status).toBe(302);
    expect((await login(email, "wrong-password")).status).toBe(403);
    expect((await login(`${uniqueId("nobody")}@example.com`, PASSWORD)).status).toBe(403);
    await relay(tenant);
    const today = yyyymmdd(Date.now());
    const res = await mgmt("GET", `/stats/daily?from=${today}&to=${today}`, asTenant(tenant));
    expect(res.status).toBe(200);
    const days = (await res.json()) as Record<string, unknown>[];
    expect(days).toHaveLength(1);
    expect(days[0]).toMatchObject({ date: `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`, logins: 2, signups: 1, leaked_passwords: 0, failed_logins: 2 });
    expect(Date.parse(String(days[0]?.created_at))).toBeLessThanOrEqual(Date.parse(String(days[0]?.updated_at)));
  });

  it("answers days with activity only, oldest first, within [from, to] inclusive (UTC)", async () => {
    const midnight = Math.floor(Date.now() / DAY) * DAY;
    await pastLog(midnight - 10 * DAY + 5, "s", "auth0|a");
    await pastLog(midnight - 10 * DAY + 3_600_000, "ss", "auth0|a");
    await pastLog(midnight - 8 * DAY + DAY - 1, "fp", "auth0|a");
    await pastLog(midnight - 8 * DAY, "sapi", null);
    await pastLog(midnight - 20 * DAY, "s", "auth0|b");
    const from = yyyymmdd(midnight - 10 * DAY);
    const to = yyyymmdd(midnight - 8 * DAY);
    const res = await mgmt("GET", `/stats/daily?from=${from}&to=${to}`, asTenant(tenant));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      {
        date: new Date(midnight - 10 * DAY).toISOString(),
        logins: 1,
        signups: 1,
        leaked_passwords: 0,
        failed_logins: 0,
        created_at: new Date(midnight - 10 * DAY + 5).toISOString(),
        updated_at: new Date(midnight - 10 * DAY + 3_600_000).toISOString(),
      },
      {
        date: new Date(midnight - 8 * DAY).toISOString(),
        logins: 0,
        signups: 0,
        leaked_passwords: 0,
        failed_logins: 1,
        created_at: new Date(midnight - 8 * DAY + DAY - 1).toISOString(),
        updated_at: new Date(midnight - 8 * DAY + DAY - 1).toISOString(),
      },
    ]);
    // Without a range: every day with activity, up to today.
    const all = (await (await mgmt("GET", "/stats/daily", asTenant(tenant))).json()) as { date: string }[];
    expect(all.map((d) => d.date)).toEqual(
      [midnight - 20 * DAY, midnight - 10 * DAY, midnight - 8 * DAY, midnight].map((ms) => new Date(ms).toISOString()),
    );
  });

  it("active users are the distinct users who logged in during the last 30 days", async () => {
    const other = await createTenant();
    const now = Date.now();
    const add = (date: number, type: string, user: string) =>
      tenantSql(other, "INSERT INTO logs (log_id, date, type, event_type, user_id) VALUES (?, ?, ?, 'test', ?)", uniqueId("log"), date, type, user);
    await add(now - 1000, "s", "auth0|one");
    await add(now - 2 * DAY, "s", "auth0|one");
    await add(now - 29 * DAY, "s", "auth0|two");
    await add(now - 31 * DAY, "s", "auth0|three");
    await add(now - 1000, "fp", "auth0|four");
    await add(now - 1000, "ss", "auth0|five");
    const res = await mgmt("GET", "/stats/active-users", asTenant(other));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toBe(2);
  });

  it("a malformed or impossible day, or from after to, is a 400 invalid_query_string", async () => {
    for (const query of ["from=2026-01-01", "to=20261301", "from=20260230", "from=yesterday", "from=20260105&to=20260101"]) {
      const res = await mgmt("GET", `/stats/daily?${query}`, asTenant(tenant));
      expect(res.status, query).toBe(400);
      expect(await res.json(), query).toMatchObject({ statusCode: 400, errorCode: "invalid_query_string" });
    }
  });

  it("who can reach them: read:stats of the tenant itself, nobody else", async () => {
    await expectRefusals(kit, "GET", "/stats/daily", "read:stats");
    await expectRefusals(kit, "GET", "/stats/active-users", "read:stats");
    const send = (path: string) => mgmt("GET", path, { token: kit.allowed, ...asTenant(kit.tenant) });
    expect((await send("/stats/daily")).status).toBe(200);
    expect((await send("/stats/active-users")).status).toBe(200);
  });
});
