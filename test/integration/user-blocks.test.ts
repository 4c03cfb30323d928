import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { seedUser } from "../helpers/flows";
import { type AttemptsTenant, attemptsTenant, errorDescription } from "../helpers/login-attempts";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/**
 * Brute-force protection's `count_per_identifier_and_ip` mode and the `/user-blocks` routes (issue 10 point 7;
 * the reference platform's shapes): locks read per user and per identifier, lifted by an administrator.
 */

const PASSWORD = "right-password-1";
let t: AttemptsTenant;
let tenant: string;

beforeAll(async () => {
  t = await attemptsTenant();
  tenant = t.tenant;
});
const newUser = async () => {
  const user = await seedUser(tenant, `ub-${crypto.randomUUID().slice(0, 8)}@example.com`, PASSWORD);
  return { email: user.email as string, id: user.user_id as string };
};
const fail = async (email: string, ip: string, times: number) => {
  for (let i = 0; i < times; i++) await t.login(email, "wrong-guess-00", ip);
};
const blocksOf = async (path: string) => {
  const res = await t.admin("GET", path);
  expect(res.status).toBe(200);
  return (await res.json()) as { blocked_for: { identifier: string; ip?: string; connection: string }[] };
};

describe("count_per_identifier_and_ip", () => {
  it("locks the user from the guessing IP only; other IPs still log in, and the lock shows that IP", async () => {
    expect((await t.admin("PATCH", "/attack-protection/brute-force-protection", { mode: "count_per_identifier_and_ip" })).status).toBe(200);
    try {
      const { email, id } = await newUser();
      await fail(email, "198.51.100.7", 3);
      expect(await errorDescription(await t.login(email, PASSWORD, "198.51.100.7"))).toMatch(/Too many failed login attempts/);
      expect((await t.login(email, PASSWORD, "198.51.100.8")).status).toBe(200);
      // The success from another IP does not forgive the guessing IP's failures.
      expect(await errorDescription(await t.login(email, PASSWORD, "198.51.100.7"))).toMatch(/Too many failed login attempts/);
      expect(await blocksOf(`/user-blocks/${encodeURIComponent(id)}`)).toEqual({
        blocked_for: [{ identifier: email, ip: "198.51.100.7", connection: "Username-Password-Authentication" }],
      });
    } finally {
      await t.admin("PATCH", "/attack-protection/brute-force-protection", { mode: "count_per_identifier" });
    }
  });

  it("counted per identifier (the default), the failures from several IPs add up to one lock", async () => {
    const { email } = await newUser();
    await fail(email, "198.51.100.20", 1);
    await fail(email, "198.51.100.21", 1);
    await fail(email, "198.51.100.22", 1);
    expect(await errorDescription(await t.login(email, PASSWORD, "198.51.100.23"))).toMatch(/Too many failed login attempts/);
  });
});

describe("/user-blocks", () => {
  it("GET /user-blocks/{id} lists a locked user's block and DELETE lifts it: the right password works again", async () => {
    const { email, id } = await newUser();
    const path = `/user-blocks/${encodeURIComponent(id)}`;
    expect(await blocksOf(path)).toEqual({ blocked_for: [] });
    await fail(email, "203.0.113.9", 3);
    expect(await blocksOf(path)).toEqual({ blocked_for: [{ identifier: email, ip: "203.0.113.9", connection: "Username-Password-Authentication" }] });
    expect((await t.admin("DELETE", path)).status).toBe(204);
    expect(await blocksOf(path)).toEqual({ blocked_for: [] });
    expect((await t.login(email, PASSWORD, "203.0.113.9")).status).toBe(200);
  });

  it("by identifier: the email's lock is found and lifted; an email no account has is locked and lifted too", async () => {
    const { email } = await newUser();
    await fail(email, "203.0.113.10", 3);
    const byEmail = `/user-blocks?identifier=${encodeURIComponent(email.toUpperCase())}`;
    expect((await blocksOf(byEmail)).blocked_for).toEqual([{ identifier: email, ip: "203.0.113.10", connection: "Username-Password-Authentication" }]);
    expect((await t.admin("DELETE", byEmail)).status).toBe(204);
    expect((await t.login(email, PASSWORD, "203.0.113.10")).status).toBe(200);

    const ghost = `ghost-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await fail(ghost, "203.0.113.11", 3);
    expect((await blocksOf(`/user-blocks?identifier=${encodeURIComponent(ghost)}`)).blocked_for).toHaveLength(1);
    expect((await t.admin("DELETE", `/user-blocks?identifier=${encodeURIComponent(ghost)}`)).status).toBe(204);
    expect((await blocksOf(`/user-blocks?identifier=${encodeURIComponent(ghost)}`)).blocked_for).toEqual([]);
  });

  it("a linked account's lock shows on its primary user, and lifting the primary's blocks lifts it", async () => {
    const primary = await newUser();
    const secondary = await newUser();
    const link = await t.admin("POST", `/users/${encodeURIComponent(primary.id)}/identities`, { provider: "auth0", user_id: secondary.id.slice("auth0|".length) });
    expect(link.status, await link.clone().text()).toBe(201);
    // The secondary's email and password still log in (as the primary): its failures lock that account.
    await fail(secondary.email, "203.0.113.20", 3);
    expect(await errorDescription(await t.login(secondary.email, PASSWORD, "203.0.113.20"))).toMatch(/Too many failed login attempts/);
    const path = `/user-blocks/${encodeURIComponent(primary.id)}`;
    expect((await blocksOf(path)).blocked_for).toEqual([{ identifier: secondary.email, ip: "203.0.113.20", connection: "Username-Password-Authentication" }]);
    expect((await t.admin("DELETE", path)).status).toBe(204);
    expect((await t.login(secondary.email, PASSWORD, "203.0.113.20")).status).toBe(200);
    // The secondary is not a user of its own any more.
    expect((await t.admin("GET", `/user-blocks/${encodeURIComponent(secondary.id)}`)).status).toBe(404);
  });

  it("by username: the account whose username it is (its failures counted by its email) is found", async () => {
    const connection = `usernames-${crypto.randomUUID().slice(0, 6)}`;
    const made = await t.admin("POST", "/connections", { name: connection, strategy: "auth0", options: { requires_username: true } });
    expect(made.status, await made.clone().text()).toBe(201);
    const email = `ub-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const username = `user_${crypto.randomUUID().slice(0, 8)}`;
    const created = await t.admin("POST", "/users", { connection, email, username, password: PASSWORD });
    expect(created.status, await created.clone().text()).toBe(201);
    const userId = ((await created.json()) as { user_id: string }).user_id;
    // Three failures counted in the account's object, as the login form counts them.
    const throttle = env.USER.getByName(`${tenant}/${userId}`);
    for (let i = 0; i < 3; i++) await throttle.attempts().begin(3, { ip: "203.0.113.21", perIp: false });
    const byUsername = `/user-blocks?identifier=${encodeURIComponent(username)}`;
    expect((await blocksOf(byUsername)).blocked_for).toEqual([{ identifier: email, ip: "203.0.113.21", connection }]);
    expect((await t.admin("DELETE", byUsername)).status).toBe(204);
    expect((await blocksOf(byUsername)).blocked_for).toEqual([]);
  });

  it("consider_brute_force_enablement=true lists nothing while the protection does not block", async () => {
    const { email, id } = await newUser();
    await fail(email, "203.0.113.12", 3);
    const path = `/user-blocks/${encodeURIComponent(id)}`;
    expect((await blocksOf(path)).blocked_for).toHaveLength(1);
    await t.admin("PATCH", "/attack-protection/brute-force-protection", { enabled: false });
    try {
      expect(await blocksOf(`${path}?consider_brute_force_enablement=true`)).toEqual({ blocked_for: [] });
      expect((await blocksOf(`${path}?consider_brute_force_enablement=false`)).blocked_for).toHaveLength(1);
    } finally {
      await t.admin("PATCH", "/attack-protection/brute-force-protection", { enabled: true });
    }
  });

  it("an administrator's block is not lifted by DELETE /user-blocks/{id}", async () => {
    const { email, id } = await newUser();
    expect((await t.admin("PATCH", `/users/${encodeURIComponent(id)}`, { blocked: true })).status).toBe(200);
    expect((await t.admin("DELETE", `/user-blocks/${encodeURIComponent(id)}`)).status).toBe(204);
    expect(await errorDescription(await t.login(email, PASSWORD, "203.0.113.13"))).not.toBe("");
    expect((await t.login(email, PASSWORD, "203.0.113.13")).status).toBe(403);
  });

  it("refuses an unknown user (404), a missing identifier (400) and odd identifiers without a 500", async () => {
    const unknown = await t.admin("GET", "/user-blocks/auth0%7Cnobody");
    expect(unknown.status).toBe(404);
    expect((await t.admin("GET", "/user-blocks")).status).toBe(400);
    expect((await t.admin("DELETE", "/user-blocks?identifier=")).status).toBe(400);
    for (const odd of ['a"b\\c', 'x" OR email:"*', "\u202e", "x".repeat(300), "名前"]) {
      const res = await t.admin("GET", `/user-blocks?identifier=${encodeURIComponent(odd)}`);
      expect(res.status, odd).toBe(200);
      expect(((await res.json()) as { blocked_for: unknown[] }).blocked_for).toEqual([]);
    }
    // Control characters name nothing: refused, never read as other letters.
    for (const odd of ["a\nb", "\u0000"]) {
      const res = await t.admin("DELETE", `/user-blocks?identifier=${encodeURIComponent(odd)}`);
      expect(res.status, JSON.stringify(odd)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, errorCode: "invalid_query_string" });
    }
  });

  it("who can reach them: no token 401; lacking scope, another tenant's, an end user's, a revoked token 403", async () => {
    const { id } = await newUser();
    const path = `/user-blocks/${encodeURIComponent(id)}`;
    const readers = await reachKit(["read:users"], tenant);
    await expectRefusals(readers, "GET", path, "read:users");
    await expectRefusals(readers, "GET", "/user-blocks?identifier=someone@example.com", "read:users");
    const writers = await reachKit(["update:users"], tenant);
    await expectRefusals(writers, "DELETE", path, "update:users");
    await expectRefusals(writers, "DELETE", "/user-blocks?identifier=someone@example.com", "update:users");
  });
});
