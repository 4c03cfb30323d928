import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, emailUser, path, usersTenant } from "../helpers/users";

/**
 * SPEC §4.3 on the lists next to users: /logs sorts by date only and pages by checkpoint; lists that are
 * not checkpoint endpoints (/sessions, /users/{id}/logs) ignore from/take and never answer `next`.
 */
describe("pagination modes outside /users (SPEC §4.3)", () => {
  it("/logs honours only sort=date:1|-1 and answers {logs, next} in checkpoint mode", async () => {
    const tenant = await usersTenant();
    await emailUser(tenant, "a@example.com");
    await emailUser(tenant, "b@example.com");
    const walked = (await (await api(tenant, "GET", "/logs?take=1")).json()) as Record<string, unknown>;
    expect(Object.keys(walked).sort()).toEqual(["logs", "next"]);
    for (const sort of ["type:1", "date:asc", "user_id:-1"]) expect((await api(tenant, "GET", `/logs?sort=${sort}`)).status, sort).toBe(400);
    expect((await api(tenant, "GET", "/logs?sort=date:1&take=1")).status).toBe(200);
  });

  it("/sessions and /users/{id}/logs ignore from and take: offset answers, never a next", async () => {
    const tenant = await usersTenant();
    const user = await emailUser(tenant, "s@example.com");
    for (let i = 0; i < 3; i++) {
      await env.TENANT.getByName(tenant).sessions().start({ id: `ses_${crypto.randomUUID()}`, secret_hash: "x", user_id: user.user_id, client_id: "c", expires_at: Date.now() + 60_000 });
    }
    const sessions = await (await api(tenant, "GET", "/sessions?take=1&from=anything")).json();
    expect(Array.isArray(sessions)).toBe(true);
    expect(sessions).toHaveLength(3);
    const logs = await (await api(tenant, "GET", `${path(user.user_id, "/logs")}?take=1&from=anything`)).json();
    expect(Array.isArray(logs)).toBe(true);
    // The sibling of /users/{id}/refresh-tokens stays checkpoint-capable ({sessions, next}), as the SDK pages it.
    const own = (await (await api(tenant, "GET", `${path(user.user_id, "/sessions")}?take=2`)).json()) as { sessions: unknown[]; next?: string };
    expect(own.sessions).toHaveLength(2);
    expect(own.next).toBeTruthy();
  });
});
