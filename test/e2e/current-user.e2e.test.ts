import { ManagementClient, ManagementError } from "auth0";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { MANAGEMENT_AUDIENCE, sdkOptions } from "./helpers/auth0";

/**
 * Issue 6 end to end: a user who signs up on the control plane and logs in asks for every management scope;
 * the token holds only the current-user scope, and the reference platform's own SDK, given that token, reads
 * the user's own record and is refused on another user and on /clients.
 */
describe("a user's management token through the auth0 SDK", () => {
  let server: RunningServer;
  const callback = "https://app.example.com/callback";
  const origin = "https://app.example.com";
  let app: { client_id: string; client_secret: string };

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    const admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const created = await admin.clients.create({
      name: "Self-service app",
      app_type: "regular_web",
      callbacks: [callback],
      web_origins: [origin],
      grant_types: ["authorization_code", "implicit"],
    });
    app = { client_id: String(created.client_id), client_secret: String(created.client_secret) };
  });

  afterAll(async () => {
    await server?.stop();
  });

  /** Sign-up, then a password login through /co/authenticate, then /authorize with its login ticket. */
  async function signUpAndAskForEverything(email: string): Promise<{ userId: string; accessToken: string }> {
    const password = `Pw-${crypto.randomUUID()}`;
    const json = { "content-type": "application/json", origin };
    const signup = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ client_id: app.client_id, email, password, connection: "Username-Password-Authentication" }),
    });
    expect(signup.status).toBe(200);
    const userId = ((await signup.json()) as { id: string }).id;
    const co = await fetch(`${server.baseUrl}/co/authenticate`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ client_id: app.client_id, username: email, password, credential_type: "password" }),
    });
    const { login_ticket } = (await co.json()) as { login_ticket: string };
    const url = new URL("/authorize", server.baseUrl);
    for (const [k, v] of Object.entries({
      client_id: app.client_id,
      redirect_uri: callback,
      response_type: "token",
      audience: MANAGEMENT_AUDIENCE,
      scope: "openid read:current_user read:users read:clients read:client_keys create:clients create:tenants",
      login_ticket,
    })) {
      url.searchParams.set(k, v);
    }
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(302);
    const fragment = new URLSearchParams(new URL(res.headers.get("location") as string).hash.slice(1));
    return { userId, accessToken: fragment.get("access_token") as string };
  }

  it("holds only read:current_user, reads its own user, and is refused on another user and on /clients", async () => {
    const me = await signUpAndAskForEverything(`me-${Date.now()}@example.com`);
    const other = await signUpAndAskForEverything(`other-${Date.now()}@example.com`);
    const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", server.baseUrl));
    const { payload } = await jwtVerify(me.accessToken, jwks, { issuer: server.issuer, audience: MANAGEMENT_AUDIENCE });
    expect(String(payload.scope).split(" ").sort()).toEqual(["openid", "read:current_user"]);

    const asUser = new ManagementClient({ ...sdkOptions(server), token: me.accessToken });
    const own = await asUser.users.get(me.userId);
    expect(own).toMatchObject({ user_id: me.userId });

    const refusals = [() => asUser.users.get(other.userId), () => asUser.clients.list()];
    for (const call of refusals) {
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ManagementError);
      expect((error as ManagementError).statusCode).toBe(403);
    }
  });
});
