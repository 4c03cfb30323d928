import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, env } from "../helpers/api";
import { redirectParams, seedClient, seedUser, type TestClient } from "../helpers/flows";
import { csrfOf, locationOf, setPolicy, TestBrowser } from "../helpers/mfa";
import { tenantSql } from "../helpers/outbox";
import { MAX_SEALED_STATE_LENGTH, openLoginState, sealLoginSession } from "../../src/worker/tenant/login-state";

/**
 * Issue 31: /authorize no longer writes the login session to the tenant object; it is sealed into the
 * `state` (AES-256-GCM, the tenant's id as additional data) and stored by the first step that changes it.
 * These tests hold the guarantees the stored session gave: a state cannot be forged, altered, read, moved
 * to another tenant or used past its expiry, and a login completes exactly once.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
let tenant: string;
let other: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  other = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

const query = () => new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "client-state-1" });

async function started(browser: TestBrowser): Promise<{ path: string; state: string }> {
  const res = await browser.get(`/authorize?${query()}`);
  expect(res.status).toBe(302);
  const path = locationOf(res);
  return { path, state: new URL(path, "http://x").searchParams.get("state") as string };
}

const loginSessions = async (id: string) => tenantSql<{ state: string; user_id: string | null }>(tenant, "SELECT state, user_id FROM login_sessions WHERE id = ?", id);

describe("sealed login state (issue 31: no tenant write at /authorize)", () => {
  it("/authorize stores nothing; the login form shows from the state alone and its completion stores the session once, completed", async () => {
    const user = await seedUser(tenant, `sealed-${crypto.randomUUID()}@example.com`);
    const browser = new TestBrowser(host);
    const { path, state } = await started(browser);
    expect(await loginSessions(state)).toEqual([]);
    // A fresh isolate's view: the page reads the object, finds no row, and opens the state.
    const page = await browser.get(path);
    expect(page.status).toBe(200);
    const html = await page.text();
    const res = await browser.post(path, { _csrf: csrfOf(html), email: user.email as string, password: PASSWORD });
    expect(redirectParams(res).query.get("code")).toBeTruthy();
    expect(redirectParams(res).query.get("state")).toBe("client-state-1");
    expect(await loginSessions(state)).toEqual([{ state: "completed", user_id: user.user_id }]);
    // The completed login's state, replayed with its cookies: the expired-login page, on display and on post.
    expect((await browser.get(path)).status).toBe(400);
    const replay = await browser.post(path, { _csrf: csrfOf(html), email: user.email as string, password: PASSWORD });
    expect(replay.status).toBe(400);
    expect(replay.headers.get("location")).toBeNull();
  });

  it("two posts of the same form at once complete the login once: one code, the other the expired-login page", async () => {
    const user = await seedUser(tenant, `double-${crypto.randomUUID()}@example.com`);
    const browser = new TestBrowser(host);
    const { path } = await started(browser);
    const csrf = csrfOf(await (await browser.get(path)).text());
    const fields = { _csrf: csrf, email: user.email as string, password: PASSWORD };
    const answers = await Promise.all([browser.post(path, fields), browser.post(path, fields)]);
    const codes = answers.filter((r) => r.status === 302 && redirectParams(r).query.get("code"));
    expect(codes).toHaveLength(1);
    expect(answers.map((r) => r.status).sort()).toEqual([302, 400]);
  });

  it("an altered, truncated, foreign-tenant or made-up state is the expired-login page, and stores nothing", async () => {
    const browser = new TestBrowser(host);
    const { state } = await started(browser);
    const dot = state.lastIndexOf(".");
    const flipped = `${state.slice(0, dot + 5)}${state[dot + 5] === "A" ? "B" : "A"}${state.slice(dot + 6)}`;
    const foreign = (await sealLoginSession(env.ENCRYPTION_KEY, other, { request: { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" } as never, csrf_token: "x".repeat(32), expires_at: Date.now() + 600_000 })).id;
    for (const bad of [flipped, state.slice(0, -4), foreign, "lss1.AAAA.BBBB", "lss1.", `${state}.extra`]) {
      const page = await browser.get(`/u2/login?state=${encodeURIComponent(bad)}`);
      expect(page.status, bad.slice(0, 40)).toBe(400);
      expect(await page.text()).not.toContain('name="_csrf"');
    }
    const stored = await tenantSql<{ n: number }>(tenant, "SELECT count(*) AS n FROM login_sessions WHERE id = ? OR id = ?", flipped, foreign);
    expect(stored[0]?.n).toBe(0);
  });

  it("each state is sealed under its own derived key: two states of one request share no salt, IV or ciphertext", async () => {
    const request = { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" } as never;
    const input = { request, csrf_token: "t".repeat(32), expires_at: Date.now() + 600_000 };
    const [a, b] = await Promise.all([sealLoginSession(env.ENCRYPTION_KEY, tenant, input), sealLoginSession(env.ENCRYPTION_KEY, tenant, input)]);
    const [, saltA, ivA, bodyA] = a.id.split(".");
    const [, saltB, ivB, bodyB] = b.id.split(".");
    expect(saltA).toHaveLength(22);
    expect(saltA).not.toBe(saltB);
    expect(ivA).not.toBe(ivB);
    expect(bodyA).not.toBe(bodyB);
    // Salt and IV moved to another state's ciphertext do not open it.
    expect(await openLoginState(env.ENCRYPTION_KEY, tenant, `lss1.${saltA}.${ivA}.${bodyB}`)).toBeNull();
    expect((await openLoginState(env.ENCRYPTION_KEY, tenant, b.id))?.csrf_token).toBe("t".repeat(32));
  });

  it("a state past its expiry does not open, and its form post completes nothing", async () => {
    const user = await seedUser(tenant, `expired-${crypto.randomUUID()}@example.com`);
    const expired = await sealLoginSession(env.ENCRYPTION_KEY, tenant, {
      request: { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" } as never,
      csrf_token: "c".repeat(32),
      expires_at: Date.now() - 1,
    });
    expect(await openLoginState(env.ENCRYPTION_KEY, tenant, expired.id)).toBeNull();
    const browser = new TestBrowser(host);
    browser.cookies.set("gh_csrf", "c".repeat(32));
    const path = `/u2/login?state=${encodeURIComponent(expired.id)}`;
    expect((await browser.get(path)).status).toBe(400);
    const res = await browser.post(path, { _csrf: "c".repeat(32), email: user.email as string, password: PASSWORD });
    expect(res.status).toBe(400);
    expect(await loginSessions(expired.id)).toEqual([]);
  });

  it("the state does not show the request: no client id, redirect URI or client state in clear", async () => {
    const { state } = await started(new TestBrowser(host));
    const decoded = state
      .split(".")
      .slice(1)
      .map((part) => {
        try {
          return atob(part.replace(/-/g, "+").replace(/_/g, "/"));
        } catch {
          return "";
        }
      })
      .join("");
    for (const secret of [client.client_id, "app.example.com", "client-state-1"]) {
      expect(state).not.toContain(secret);
      expect(decoded).not.toContain(secret);
    }
  });

  it("a request too large for a short state (a long client state) is stored at /authorize as before, and logs in", async () => {
    const user = await seedUser(tenant, `large-${crypto.randomUUID()}@example.com`);
    const browser = new TestBrowser(host);
    const big = new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "s".repeat(1500) });
    const path = locationOf(await browser.get(`/authorize?${big}`));
    const state = new URL(path, "http://x").searchParams.get("state") as string;
    expect(state).toMatch(/^ls_/);
    expect(path.length).toBeLessThan(200);
    expect(await loginSessions(state)).toEqual([{ state: "pending", user_id: null }]);
    // A typical request seals into a short state.
    expect((await started(new TestBrowser(host))).state.length).toBeLessThanOrEqual(MAX_SEALED_STATE_LENGTH);
    const csrf = csrfOf(await (await browser.get(path)).text());
    const res = await browser.post(path, { _csrf: csrf, email: user.email as string, password: PASSWORD });
    expect(redirectParams(res).query.get("state")).toBe("s".repeat(1500));
    expect(redirectParams(res).query.get("code")).toBeTruthy();
  });

  it("under an MFA policy the move to the second factor stores the session (awaiting_mfa) and a second post of the password form is refused", async () => {
    const mfaTenant = await createTenant();
    const mfaHost = `${mfaTenant}.localhost:8787`;
    const mfaClient = await seedClient(mfaTenant, { callbacks: [CALLBACK] });
    await setPolicy(mfaTenant, ["all-applications"]);
    const user = await seedUser(mfaTenant, `mfa-${crypto.randomUUID()}@example.com`);
    const browser = new TestBrowser(mfaHost);
    const q = new URLSearchParams({ client_id: mfaClient.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" });
    const path = locationOf(await browser.get(`/authorize?${q}`));
    const state = new URL(path, "http://x").searchParams.get("state") as string;
    const csrf = csrfOf(await (await browser.get(path)).text());
    const first = await browser.post(path, { _csrf: csrf, email: user.email as string, password: PASSWORD });
    expect(locationOf(first)).toMatch(/^\/u2\/mfa/);
    const rows = await tenantSql<{ state: string; user_id: string }>(mfaTenant, "SELECT state, user_id FROM login_sessions WHERE id = ?", state);
    expect(rows).toEqual([{ state: "awaiting_mfa", user_id: user.user_id }]);
    const again = await browser.post(path, { _csrf: csrf, email: user.email as string, password: PASSWORD });
    expect(again.status).toBe(400);
    expect(again.headers.get("location")).toBeNull();
  });
});
