import { randomBytes } from "node:crypto";
import type { ManagementClient } from "auth0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver } from "../../scripts/webhook-receiver.mjs";
import { chromiumLogin, type OidcApp, startOidcApp, verifiedIdToken as verified } from "./helpers/oidc-app";

/**
 * Issue 32 end to end on a running `wrangler dev`: the reference platform's Node SDK creates an import-mode
 * custom database connection whose scripts call a legacy user store served on loopback by this test (its
 * own users, its own bcrypt hashes, its own HTTP API); a legacy user logs in through the universal login in
 * Chromium and lands as a Gatehouse user with the same profile; the legacy store is stopped; the same user
 * logs in again with the same password; a wrong password answers as a wrong password. A post-login action
 * calls the same local server and puts its answer into a namespaced claim.
 */
const random = () => randomBytes(6).toString("hex");
const CLAIM = "https://gatehouse.example/legacy";

const LOGIN = `function login(email, password, callback) {
  fetch(configuration.BASE + "/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) })
    .then(async (res) => {
      if (res.status === 401) return callback(new WrongUsernameOrPasswordError(email, "Wrong email or password."));
      if (!res.ok) return callback(new Error("legacy store answered " + res.status));
      const u = await res.json();
      callback(null, { user_id: u.user_id, email: u.email, email_verified: true, name: u.name });
    })
    .catch(callback);
}`;
const GET_USER = `function getByEmail(email, callback) {
  fetch(configuration.BASE + "/users?email=" + encodeURIComponent(email))
    .then(async (res) => (res.status === 404 ? callback(null) : callback(null, await res.json())))
    .catch(callback);
}`;

describe("an import-mode custom database through the auth0 SDK and a Chromium login", () => {
  let app: OidcApp;
  let management: ManagementClient;
  let legacy: Awaited<ReturnType<typeof startReceiver>>;
  let connection: string;
  const user = { email: `legacy-${random()}@example.com`, password: `Legacy-Horse-${random()}` };
  const store = `e2e-${random()}`;

  beforeAll(async () => {
    app = await startOidcApp("Custom DB E2E App");
    management = app.management;
    legacy = await startReceiver();
    const seeded = await fetch(`${legacy.url}/legacy/${store}/seed`, { method: "POST", body: JSON.stringify({ users: [{ ...user, name: "Grace Legacy" }] }) });
    expect(seeded.status).toBe(200);
    connection = `legacy-${random()}`;
    const created = await management.connections.create({
      name: connection,
      strategy: "auth0",
      enabled_clients: [app.config.clientMetadata().client_id],
      options: {
        enabledDatabaseCustomization: true,
        import_mode: true,
        customScripts: { login: LOGIN, get_user: GET_USER },
        configuration: { BASE: `${legacy.url}/legacy/${store}` },
      },
    });
    expect(created.options).toMatchObject({ enabledDatabaseCustomization: true, import_mode: true });
  }, 120_000);

  afterAll(async () => {
    await legacy?.close().catch(() => undefined);
    await app?.close();
  }, 60_000);

  /** Chromium through the login page of the connection; answers where it landed. */
  const browserLogin = (password: string) => chromiumLogin(app, { email: user.email, password }, { connection });
  const verifiedIdToken = (login: Awaited<ReturnType<typeof browserLogin>>) => verified(app, login);

  it("a legacy user logs in and lands with the legacy profile; with the store stopped, the same password still works", async () => {
    const action = await management.actions.create({
      name: `legacy-claim-${random()}`,
      supported_triggers: [{ id: "post-login", version: "v3" }],
      code: `exports.onExecutePostLogin = async (event, api) => {
        const res = await fetch(${JSON.stringify(`${legacy.url}/data/e2e-claim?tier=platinum`)});
        api.idToken.setCustomClaim(${JSON.stringify(CLAIM)}, (await res.json()).query.tier);
      };`,
    });
    await management.actions.deploy(action.id ?? "");
    await management.actions.triggers.bindings.updateMany("post-login", { bindings: [{ ref: { type: "action_id", value: action.id ?? "" } }] });

    const first = await verifiedIdToken(await browserLogin(user.password));
    expect(first).toMatchObject({ sub: "auth0|1000", email: user.email, name: "Grace Legacy", [CLAIM]: "platinum" });
    const moved = await management.users.get("auth0|1000");
    expect(moved).toMatchObject({ email: user.email, name: "Grace Legacy" });

    await management.actions.triggers.bindings.updateMany("post-login", { bindings: [] });
    await legacy.close();
    const again = await verifiedIdToken(await browserLogin(user.password));
    expect(again).toMatchObject({ sub: "auth0|1000", email: user.email });

    const wrong = await browserLogin("not-the-password");
    expect(wrong.callbackUrl).toBeNull();
    expect(wrong.pageText).toContain("Wrong email or password.");
  });
});
