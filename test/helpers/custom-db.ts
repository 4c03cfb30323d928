import { expect } from "vitest";
import { call, uniqueId } from "./api";
import { onTenant } from "./actions";
import { pendingLogin, seedClient, type TestClient } from "./flows";
import { receiverUrl } from "./outbox";

/**
 * Custom database scripts against the legacy store the test receiver serves (test/receiver/legacy-store.mjs),
 * written as a tenant would: `fetch` through the egress gateway, `configuration.BASE` for the store's URL.
 */
const post = (path: string, body: string) =>
  `fetch(configuration.BASE + "${path}", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(${body}) })`;

export const LEGACY_SCRIPTS = {
  login: `function login(email, password, callback) {
  ${post("/login", "{ email, password }")}
    .then(async (res) => {
      if (res.status === 401) return callback(new WrongUsernameOrPasswordError(email, "Wrong email or password."));
      if (!res.ok) return callback(new Error("legacy store answered " + res.status));
      const u = await res.json();
      callback(null, { user_id: u.user_id, email: u.email, email_verified: u.email_verified, name: u.name, given_name: u.given_name, app_metadata: { plan: u.plan || null } });
    })
    .catch(callback);
}`,
  get_user: `function getByEmail(email, callback) {
  fetch(configuration.BASE + "/users?email=" + encodeURIComponent(email))
    .then(async (res) => {
      if (res.status === 404) return callback(null);
      if (!res.ok) return callback(new Error("legacy store answered " + res.status));
      const u = await res.json();
      callback(null, { user_id: u.user_id, email: u.email, email_verified: u.email_verified, name: u.name });
    })
    .catch(callback);
}`,
  create: `function create(user, callback) {
  ${post("/users", "{ email: user.email, password: user.password }")}
    .then((res) => res.status === 409 ? callback(new ValidationError("user_exists", "the user already exists")) : res.ok ? callback(null) : callback(new Error("legacy store answered " + res.status)))
    .catch(callback);
}`,
  change_password: `function changePassword(email, newPassword, callback) {
  ${post("/password", "{ email, password: newPassword }")}
    .then((res) => callback(null, res.ok))
    .catch(callback);
}`,
  verify: `function verify(email, callback) {
  ${post("/verify", "{ email }")}.then((res) => callback(null, res.ok)).catch(callback);
}`,
  change_email: `function changeEmail(email, newEmail, verified, callback) {
  ${post("/email", "{ email, new_email: newEmail, verified }")}.then((res) => callback(null, res.ok)).catch(callback);
}`,
  delete: `function remove(id, callback) {
  fetch(configuration.BASE + "/users/" + id, { method: "DELETE" })
    .then((res) => (res.ok ? callback(null) : callback(new Error("legacy store answered " + res.status))))
    .catch(callback);
}`,
};

export interface LegacyUser {
  email: string;
  password: string;
  name?: string;
  given_name?: string;
  plan?: string;
}

/** A legacy store of its own (name) with these users, hashed by the store with its own bcrypt. */
export async function legacyStore(users: LegacyUser[]): Promise<{ name: string; base: string; calls: () => Promise<Record<string, number>>; off: () => Promise<void> }> {
  const name = uniqueId("store");
  const base = `${receiverUrl()}/legacy/${name}`;
  const seeded = await fetch(`${base}/seed`, { method: "POST", body: JSON.stringify({ users }) });
  expect(seeded.status).toBe(200);
  return {
    name,
    base,
    calls: async () => (await (await fetch(`${base}/calls`)).json()) as Record<string, number>,
    off: async () => void (await fetch(`${base}/off`, { method: "POST" })),
  };
}

/** Creates a custom database connection on the tenant; answers its management API body. */
export async function customConnection(tenant: string, options: Record<string, unknown>): Promise<{ id: string; name: string; options: Record<string, unknown> }> {
  const res = await onTenant(tenant, "POST", "/connections", { name: uniqueId("legacy-db").replaceAll("_", "-"), strategy: "auth0", options });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; name: string; options: Record<string, unknown> };
}

/** An import-mode connection over a store, and a client to log in with. */
export async function importModeSetup(tenant: string, base: string, extra: Record<string, unknown> = {}) {
  const connection = await customConnection(tenant, {
    enabledDatabaseCustomization: true,
    import_mode: true,
    customScripts: { login: LEGACY_SCRIPTS.login, get_user: LEGACY_SCRIPTS.get_user },
    configuration: { BASE: base },
    ...extra,
  });
  const client = await seedClient(tenant, { callbacks: ["https://app.example.com/callback"] });
  return { connection, client };
}

/** A password login on the universal login page through a named connection; answers the page's response. */
export async function loginThrough(tenant: string, client: TestClient, connection: string, email: string, password: string): Promise<Response> {
  const pending = await pendingLogin(tenant, client.client_id, { connection });
  return call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password }).toString(),
  });
}
