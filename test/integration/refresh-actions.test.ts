import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";
import { bindAction } from "../helpers/actions";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, tokenForm } from "../helpers/flows";

/** Post-login actions on the refresh grant (transaction.protocol oauth2-refresh-token): a deny spends nothing. */

const CALLBACK = "https://app.example.com/callback";
const DENY_WHILE_FLAGGED = `exports.onExecutePostLogin = async (event, api) => {
  if (event.transaction.protocol === "oauth2-refresh-token" && event.user.app_metadata.deny_refresh) api.access.deny("refresh paused");
};`;

describe("post-login actions on refresh", () => {
  it("a refresh an action denies does not spend the token: once allowed, the same token refreshes (no leeway)", async () => {
    const tenant = await createTenant();
    const host = `${tenant}.localhost:8787`;
    const admin = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenant }, ...(body !== undefined ? { body } : {}) });
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    expect((await admin("PATCH", `/clients/${client.client_id}`, { refresh_token: { leeway: 0 } })).status).toBe(200);
    const user = await seedUser(tenant, `ra-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const code = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie })).query.get("code") as string;
    const first = (await (await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host)).json()) as { refresh_token: string };
    expect(first.refresh_token).toBeTruthy();
    await bindAction(tenant, "post-login", DENY_WHILE_FLAGGED);
    const refresh = () => tokenForm({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    const path = `/users/${encodeURIComponent(user.user_id)}`;

    expect((await admin("PATCH", path, { app_metadata: { deny_refresh: true } })).status).toBe(200);
    const denied = await refresh();
    expect(await denied.json()).toEqual({ error: "access_denied", error_description: "refresh paused" });

    expect((await admin("PATCH", path, { app_metadata: { deny_refresh: false } })).status).toBe(200);
    const allowed = await refresh();
    expect(allowed.status, await allowed.clone().text()).toBe(200);
    // And it rotated this time: the old token is spent (no leeway), so its reuse revokes the family, successor included.
    const next = (await allowed.json()) as { refresh_token: string };
    expect((await refresh()).status).toBe(403);
    expect((await tokenForm({ grant_type: "refresh_token", refresh_token: next.refresh_token, client_id: client.client_id, client_secret: client.client_secret }, {}, host)).status).toBe(403);
  });

  it("api.refreshToken.revoke refuses the exchange with the reason and revokes the token; addScope reaches the refreshed access token; event.refresh_token; multifactor.enable cannot prompt on a refresh", async () => {
    const tenant = await createTenant();
    const host = `${tenant}.localhost:8787`;
    const admin = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenant }, ...(body !== undefined ? { body } : {}) });
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    const user = await seedUser(tenant, `rr-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const code = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie })).query.get("code") as string;
    const first = (await (await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host)).json()) as { refresh_token: string };
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        if (event.transaction.protocol !== "oauth2-refresh-token") return;
        const mode = event.user.app_metadata.mode;
        if (mode === "scope") api.accessToken.addScope("read:extra").accessToken.setCustomClaim("https://gatehouse.test/rt", event.refresh_token);
        if (mode === "mfa") api.multifactor.enable("any");
        if (mode === "revoke") api.refreshToken.revoke("device reported stolen");
      };`,
    );
    const refresh = async () => {
      const res = await tokenForm({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const mode = async (value: string) => expect((await admin("PATCH", `/users/${encodeURIComponent(user.user_id)}`, { app_metadata: { mode: value } })).status).toBe(200);

    await mode("scope");
    const widened = await refresh();
    expect(widened.status).toBe(200);
    expect(String(widened.body.scope).split(" ")).toContain("read:extra");
    const access = decodeJwt(widened.body.access_token as string);
    expect(String(access.scope).split(" ")).toContain("read:extra");
    // event.refresh_token: the reference's fields; its id reads the token on the management API.
    const seen = access["https://gatehouse.test/rt"] as { id: string; user_id: string; client_id: string; rotating: boolean };
    expect(seen).toMatchObject({ user_id: user.user_id, client_id: client.client_id, rotating: true });
    const read = await admin("GET", `/refresh-tokens/${encodeURIComponent(seen.id)}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: seen.id, user_id: user.user_id });

    await mode("mfa");
    const mfa = await refresh();
    expect(mfa.body).toEqual({
      error: "access_denied",
      error_description: "Multifactor authentication was requested by an action, but a refresh token exchange cannot prompt for it (skip it when event.transaction.protocol is oauth2-refresh-token)",
    });

    await mode("revoke");
    expect((await refresh()).body).toEqual({ error: "access_denied", error_description: "device reported stolen" });
    // Revoked: with the action quiet again, the token no longer refreshes.
    await mode("none");
    const after = await refresh();
    expect(after.status).toBe(403);
    expect(after.body.error).toBe("invalid_grant");
  });
});
