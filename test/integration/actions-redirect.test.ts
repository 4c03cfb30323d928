import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { bindAction } from "../helpers/actions";
import { actionLoginSetup, exchangeCode, passwordLoginOf, redirectError } from "../helpers/action-logins";

/**
 * Issue 32 point 3: the rest of the post-login `api`. A redirect suspends the login and sends the browser
 * away with a `state`; /continue (GET or POST) resumes it once, for that browser only, running the
 * redirecting action's onContinuePostLogin and the actions after it.
 */
const NS = "https://gatehouse.test";
const PAGE = "https://consent.example.org/terms";

/** The continue cookie a suspension set, as a Cookie header. */
function continueCookie(res: Response): string {
  const set = res.headers.getSetCookie().find((c) => c.startsWith("gh_continue="));
  expect(set, "the redirect sets the continue cookie").toBeTruthy();
  expect(set).toMatch(/Path=\/continue/i);
  expect(set).toMatch(/HttpOnly/i);
  return (set ?? "").split(";")[0] as string;
}

/** Logs in until an action sends the browser away: the page it goes to, its state and the cookie. */
async function suspended(tenant: string, client: Parameters<typeof passwordLoginOf>[1], email: string) {
  const res = await passwordLoginOf(tenant, client, email);
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location") ?? "");
  const state = location.searchParams.get("state") ?? "";
  expect(state.length).toBeGreaterThan(20);
  return { location, state, cookie: continueCookie(res) };
}

const continueGet = (tenant: string, query: string, cookie: string) =>
  call(`/continue?${query}`, { host: `${tenant}.localhost:8787`, redirect: "manual", headers: { cookie } });

const continuePost = (tenant: string, form: Record<string, string>, cookie: string) =>
  call("/continue", {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    redirect: "manual",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });

const REDIRECTING = `
exports.onExecutePostLogin = async (event, api) => {
  api.idToken.setCustomClaim("${NS}/before", "kept");
  api.redirect.sendUserTo("${PAGE}?lang=en", { query: { plan: "gold", state: "mine" } });
};
exports.onContinuePostLogin = async (event, api) => {
  api.idToken.setCustomClaim("${NS}/answer", event.request.query.answer ?? event.request.body.answer ?? null);
};`;

describe("api.redirect.sendUserTo and /continue (issue 32 point 3)", () => {
  it("suspends the login, sends the browser to the page with its query and the state; GET /continue resumes it and the login completes with every action's claims", async () => {
    const { tenant, client, email } = await actionLoginSetup();
    await bindAction(tenant, "post-login", REDIRECTING);
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.idToken.setCustomClaim("${NS}/after", true); };`);
    const away = await suspended(tenant, client, email);
    expect(`${away.location.origin}${away.location.pathname}`).toBe(PAGE);
    expect(away.location.searchParams.get("lang")).toBe("en");
    expect(away.location.searchParams.get("plan")).toBe("gold");
    // The service's state wins over one the action put in the query.
    expect(away.state).not.toBe("mine");
    const back = await continueGet(tenant, `state=${away.state}&answer=yes`, away.cookie);
    expect(back.status).toBe(302);
    expect(back.headers.get("location")).toMatch(/^https:\/\/app\.example\.com\/callback\?/);
    const { id } = await exchangeCode(tenant, client, back);
    expect(id).toMatchObject({ [`${NS}/before`]: "kept", [`${NS}/answer`]: "yes", [`${NS}/after`]: true });
  });

  it("POST /continue hands the posted fields to onContinuePostLogin as event.request.body", async () => {
    const { tenant, client, email } = await actionLoginSetup();
    await bindAction(tenant, "post-login", REDIRECTING);
    const away = await suspended(tenant, client, email);
    const back = await continuePost(tenant, { state: away.state, answer: "posted" }, away.cookie);
    expect(back.status).toBe(302);
    const { id } = await exchangeCode(tenant, client, back);
    expect(id[`${NS}/answer`]).toBe("posted");
  });

  it("a replayed /continue, a state from another browser, a wrong state or no cookie get the expired-login page; the rightful browser still continues", async () => {
    const { tenant, client, email } = await actionLoginSetup();
    await bindAction(tenant, "post-login", REDIRECTING);
    const mine = await suspended(tenant, client, email);
    const theirs = await suspended(tenant, client, email);
    expect(theirs.cookie).not.toBe(mine.cookie);
    // Another browser (another transaction's cookie) presents my state: refused, and my state stays usable.
    const crossed = await continueGet(tenant, `state=${mine.state}`, theirs.cookie);
    expect(crossed.status).toBe(400);
    expect(await crossed.text()).toContain("Login link expired");
    expect((await continueGet(tenant, "state=not-a-state", mine.cookie)).status).toBe(400);
    expect((await continueGet(tenant, `state=${mine.state}`, "")).status).toBe(400);
    const first = await continueGet(tenant, `state=${mine.state}`, mine.cookie);
    expect(first.status).toBe(302);
    expect(redirectError(first).code).toBeTruthy();
    const replay = await continueGet(tenant, `state=${mine.state}`, mine.cookie);
    expect(replay.status).toBe(400);
    expect(replay.headers.get("location")).toBeNull();
  });

  it("encodeToken signs HS256 with iss, sub, exp and state; validateToken accepts the page's answer and refuses a wrong secret, an expired token or another login's token", async () => {
    const { tenant, client, user, email } = await actionLoginSetup();
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        const token = api.redirect.encodeToken({ secret: event.secrets.SHARED, payload: { favourite: "blue" }, expiresInSeconds: 120 });
        api.redirect.sendUserTo("${PAGE}", { query: { session_token: token } });
      };
      exports.onContinuePostLogin = async (event, api) => {
        const claims = api.redirect.validateToken({ secret: event.secrets.SHARED, tokenParameterName: "answer_token" });
        api.idToken.setCustomClaim("${NS}/favourite", claims.favourite);
        api.idToken.setCustomClaim("${NS}/token_sub", claims.sub);
      };`,
      { secrets: [{ name: "SHARED", value: "a-shared-secret-of-the-page" }] },
    );
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const hmac = async (input: string, secret = "a-shared-secret-of-the-page") => {
      const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      return Buffer.from(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(input))).toString("base64url");
    };
    const sign = async (claims: Record<string, unknown>, secret?: string) => {
      const input = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(claims)}`;
      return `${input}.${await hmac(input, secret)}`;
    };
    const away = await suspended(tenant, client, email);
    // What the page receives: a token it can verify with the shared secret.
    const sent = away.location.searchParams.get("session_token") ?? "";
    const [head, body, signature] = sent.split(".");
    expect(await hmac(`${head}.${body}`)).toBe(signature);
    const claims = JSON.parse(Buffer.from(body ?? "", "base64url").toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: `${tenant}.localhost:8787`, sub: user.user_id, state: away.state, favourite: "blue" });
    expect((claims.exp as number) - (claims.iat as number)).toBe(120);

    const now = Math.floor(Date.now() / 1000);
    const good = { sub: user.user_id, state: away.state, favourite: "green", exp: now + 60 };
    // Wrong secret: the action sees the error, the login is refused.
    const forged = await continueGet(tenant, `state=${away.state}&answer_token=${await sign(good, "guess")}`, away.cookie);
    expect(redirectError(forged)).toMatchObject({ error: "access_denied", description: "The answer_token has an invalid signature" });

    const cases: ((state: string) => Promise<[string, string]>)[] = [
      async (state) => [await sign({ ...good, state, exp: now - 5 }), "The answer_token has expired"],
      // A token of the first login (its state) presented in another one.
      async () => [await sign(good), "The answer_token was not issued for this login (state mismatch)"],
      async () => ["not.a.token", "The answer_token parameter is not a signed token"],
    ];
    for (const make of cases) {
      const next = await suspended(tenant, client, email);
      const [token, message] = await make(next.state);
      const refused = await continueGet(tenant, `state=${next.state}&answer_token=${encodeURIComponent(token)}`, next.cookie);
      expect(redirectError(refused)).toMatchObject({ error: "access_denied", description: message });
    }

    const last = await suspended(tenant, client, email);
    const back = await continueGet(tenant, `state=${last.state}&answer_token=${await sign({ ...good, state: last.state })}`, last.cookie);
    const { id } = await exchangeCode(tenant, client, back);
    expect(id).toMatchObject({ [`${NS}/favourite`]: "green", [`${NS}/token_sub`]: user.user_id });
  });

  it("refuses a relative URL, a javascript: URL and an oversized query inside the action, and the login fails with the message", async () => {
    for (const [args, message] of [
      [`"/relative/page"`, "api.redirect.sendUserTo needs an absolute http or https URL"],
      [`"javascript:alert(1)"`, "api.redirect.sendUserTo needs an absolute http or https URL"],
      [`"${PAGE}", { query: { big: "x".repeat(5000) } }`, "api.redirect.sendUserTo: the URL with its query is longer than 4096 characters"],
      [`"${PAGE}", { query: "plan=gold" }`, "api.redirect.sendUserTo: options.query must be an object"],
    ] as const) {
      const { tenant, client, email } = await actionLoginSetup();
      await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.redirect.sendUserTo(${args}); };`);
      const res = await passwordLoginOf(tenant, client, email);
      expect(redirectError(res)).toEqual({ error: "access_denied", description: message, code: null });
      expect(res.headers.getSetCookie().some((c) => c.startsWith("gh_continue="))).toBe(false);
    }
  });
});

describe("the rest of the post-login api (issue 32 point 3)", () => {
  it("addScope and removeScope change the access token's scope only; canRedirect is true for an interactive login", async () => {
    const { tenant, client, email } = await actionLoginSetup();
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        // Each call returns the api object, as the reference's do.
        api.accessToken.addScope("read:reports").accessToken.addScope("write:later");
        api.accessToken.removeScope("email");
        api.accessToken.removeScope("write:later");
        api.idToken.setCustomClaim("${NS}/can", api.redirect.canRedirect());
      };`,
    );
    const { access, id, scope } = await exchangeCode(tenant, client, await passwordLoginOf(tenant, client, email));
    expect(String(access.scope).split(" ").sort()).toEqual(["openid", "profile", "read:reports"]);
    expect(scope).toBe(access.scope);
    // The ID token still answers the scopes the client asked for.
    expect(id.email).toBe(email);
    expect(id[`${NS}/can`]).toBe(true);
  });

  it("api.cache keeps a trigger's entries across logins within their lifetime, answers errors past its bounds and forgets deleted keys", async () => {
    const { tenant, client, email } = await actionLoginSetup();
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        const hit = api.cache.get("greeting");
        api.idToken.setCustomClaim("${NS}/cached", hit ? hit.value : null);
        const round = api.cache.get("round");
        if (round && round.value === "2") { api.cache.delete("greeting"); return; }
        if (round) { api.cache.set("round", "2"); return; }
        api.cache.set("round", "1");
        api.idToken.setCustomClaim("${NS}/set", api.cache.set("greeting", "hello", { ttl: 60000 }).type);
        api.idToken.setCustomClaim("${NS}/big", api.cache.set("big", "x".repeat(5000)).code);
        api.idToken.setCustomClaim("${NS}/long_key", api.cache.set("k".repeat(65), "v").code);
        let full = null;
        for (let i = 0; i < 25 && !full; i++) { const r = api.cache.set("k" + i, "v"); if (r.type === "error") full = r.code + "@" + i; }
        api.idToken.setCustomClaim("${NS}/full", full);
      };`,
    );
    const first = (await exchangeCode(tenant, client, await passwordLoginOf(tenant, client, email))).id;
    // 20 entries at most: "round", "greeting" and k0..k17 fit, k18 does not.
    expect(first).toMatchObject({ [`${NS}/cached`]: null, [`${NS}/set`]: "success", [`${NS}/big`]: "VALUE_TOO_LARGE", [`${NS}/long_key`]: "INVALID_KEY", [`${NS}/full`]: "CACHE_FULL@18" });
    const second = (await exchangeCode(tenant, client, await passwordLoginOf(tenant, client, email))).id;
    expect(second[`${NS}/cached`]).toBe("hello");
    // Another tenant's same action sees nothing of this tenant's cache.
    const other = await actionLoginSetup();
    await bindAction(other.tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { const hit = api.cache.get("greeting"); api.idToken.setCustomClaim("${NS}/cached", hit ? hit.value : null); };`);
    expect((await exchangeCode(other.tenant, other.client, await passwordLoginOf(other.tenant, other.client, other.email))).id[`${NS}/cached`]).toBeNull();
    // The third login deletes the key; the fourth finds nothing.
    expect((await exchangeCode(tenant, client, await passwordLoginOf(tenant, client, email))).id[`${NS}/cached`]).toBe("hello");
    expect((await exchangeCode(tenant, client, await passwordLoginOf(tenant, client, email))).id[`${NS}/cached`]).toBeNull();
  });

  it("a tenant pinned at the schema before the cache table (expand/contract) still logs in with an action that uses api.cache", async () => {
    const { tenant, client, email } = await actionLoginSetup();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.cache.set("k", "v"); const hit = api.cache.get("k"); api.idToken.setCustomClaim("${NS}/hit", hit ? hit.value : null); };`);
    await runInDurableObject(env.TENANT.getByName(tenant), (_object, state) => {
      state.storage.sql.exec("DROP TABLE action_cache");
    });
    const { id } = await exchangeCode(tenant, client, await passwordLoginOf(tenant, client, email));
    // Within the run the action sees its own write; nothing is stored.
    expect(id[`${NS}/hit`]).toBe("v");
  });

  it("api.session.revoke refuses the login with the reason; members this service does not offer, or not in this flow, are a clear error, never a silent no-op", async () => {
    for (const [code, message] of [
      [`api.session.revoke("suspicious device");`, "suspicious device"],
      [`api.authentication.recordMethod("https://idp.example.org");`, "api.authentication.recordMethod is not supported by this service"],
      [`api.refreshToken.revoke("no");`, "api.refreshToken.revoke can only be used in a refresh token exchange (event.transaction.protocol oauth2-refresh-token)"],
    ] as const) {
      const { tenant, client, email } = await actionLoginSetup();
      await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { ${code} };`);
      const res = await passwordLoginOf(tenant, client, email);
      expect(redirectError(res)).toEqual({ error: "access_denied", description: message, code: null });
    }
  });
});
