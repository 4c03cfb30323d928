import { describe, expect, it } from "vitest";
import { call, createTenant, uniqueId } from "../helpers/api";
import { runAlarm, sinkTo } from "../helpers/jobs";
import { TestBrowser } from "../helpers/mfa";
import { onTenant } from "../helpers/actions";
import { customConnection, importModeSetup, LEGACY_SCRIPTS, legacyStore, loginThrough } from "../helpers/custom-db";
import { logsOf, relay, tenantSql } from "../helpers/outbox";
import { seedClient } from "../helpers/flows";

/**
 * Issue 32 point 2: custom database connections. A legacy user store with its own bcrypt hashes is served
 * by the test receiver over HTTP; the connection's scripts reach it through the egress gateway.
 */
const email = () => `${uniqueId("legacy")}@example.com`;
const host = (tenant: string) => `${tenant}.localhost:8787`;

const signup = (tenant: string, clientId: string, connection: string, who: string, password: string) =>
  call("/dbconnections/signup", {
    method: "POST",
    host: host(tenant),
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email: who, password, connection }),
  });

/** Asks for a reset link, follows the email, sets the new password; answers the last page's status. */
async function resetPassword(tenant: string, clientId: string, connection: string, who: string, password: string): Promise<number> {
  const asked = await call("/dbconnections/change_password", {
    method: "POST",
    host: host(tenant),
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email: who, connection }),
  });
  expect(asked.status).toBe(200);
  await runAlarm(tenant);
  const [mail] = await sinkTo(tenant, who);
  const link = /https?:\/\/\S+\/u2\/reset-password\/change\?\S+/.exec(mail?.text ?? "")?.[0];
  expect(link, `no reset email to ${who}`).toBeTruthy();
  const ticket = new URL(link as string).searchParams.get("ticket") as string;
  return (await new TestBrowser(host(tenant)).post("/u2/reset-password/change", { ticket, password, password_confirm: password })).status;
}

const usersOf = (tenant: string, connection: string) =>
  tenantSql<{ user_id: string; email: string; name: string; password_hash: string | null; app_metadata: string }>(
    tenant,
    "SELECT user_id, email, name, password_hash, app_metadata FROM users WHERE connection = ?",
    connection,
  );

describe("import mode: users move with their password on their first login (lazy migration)", () => {
  it("a legacy user logs in, lands as a Gatehouse user with the legacy profile, and logs in again with the store switched off", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1", name: "Ada Legacy", given_name: "Ada", plan: "gold" }]);
    const { connection, client } = await importModeSetup(tenant, store.base);

    const first = await loginThrough(tenant, client, connection.name, who, "legacy-pass-1");
    expect(first.status, await first.clone().text()).toBe(302);
    expect(new URL(first.headers.get("location") ?? "").searchParams.get("code")).toBeTruthy();
    const [moved] = await usersOf(tenant, connection.name);
    expect(moved).toMatchObject({ user_id: "auth0|1000", email: who, name: "Ada Legacy" });
    expect(JSON.parse(moved?.app_metadata ?? "{}")).toEqual({ plan: "gold" });
    // Hashed by Gatehouse, not the legacy store's hash.
    expect(moved?.password_hash).toMatch(/^\$2[aby]\$\d\d\$/);
    expect(await store.calls()).toEqual({ login: 1 });

    await store.off();
    const again = await loginThrough(tenant, client, connection.name, who, "legacy-pass-1");
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location") ?? "").searchParams.get("code")).toBeTruthy();
    expect(await store.calls()).toEqual({ login: 1 });
    expect(await usersOf(tenant, connection.name)).toHaveLength(1);

    await relay(tenant);
    const logs = await logsOf(tenant, `?q=${encodeURIComponent(`user_id:"auth0|1000"`)}`);
    expect(logs.map((l) => l.type).sort()).toEqual(["s", "s", "ss"]);
    expect(logs.find((l) => l.type === "ss")?.description).toBe(`User moved from the custom database of connection ${connection.name}`);
  });

  it("a wrong password answers as any wrong password (fp) and moves no one", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1" }]);
    const { connection, client } = await importModeSetup(tenant, store.base);
    const res = await loginThrough(tenant, client, connection.name, who, "not-the-password");
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Wrong email or password.");
    expect(await usersOf(tenant, connection.name)).toHaveLength(0);
    await relay(tenant);
    const [failure] = await logsOf(tenant, "?q=type:fp");
    expect(failure?.description).toMatch(/^Wrong email or password\./);
  });
});

describe("import mode: get_user serves sign-up duplicate checks and password resets for users not moved yet", () => {
  it("sign-up of an address the legacy store has is a duplicate; a new address signs up locally", async () => {
    const tenant = await createTenant();
    const known = email();
    const store = await legacyStore([{ email: known, password: "legacy-pass-1" }]);
    const { connection, client } = await importModeSetup(tenant, store.base);
    const dup = await signup(tenant, client.client_id, connection.name, known, "Another-pass-9!");
    expect(dup.status).toBe(400);
    // The reference's answer to a duplicate, local or legacy alike (no account enumeration).
    expect(await dup.json()).toMatchObject({ code: "invalid_signup" });
    expect(await usersOf(tenant, connection.name)).toHaveLength(0);
    const fresh = email();
    const created = await signup(tenant, client.client_id, connection.name, fresh, "Fresh-pass-9!");
    expect(created.status, await created.clone().text()).toBe(200);
    expect((await usersOf(tenant, connection.name)).map((u) => u.email)).toEqual([fresh]);
    expect(await store.calls()).toEqual({ get_user: 2 });
    expect((await loginThrough(tenant, client, connection.name, fresh, "Fresh-pass-9!")).status).toBe(302);
  });

  it("a user never seen resets their password through get_user, then logs in locally with it", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "forgotten-1", name: "Never Seen" }]);
    const { connection, client } = await importModeSetup(tenant, store.base);
    expect(await resetPassword(tenant, client.client_id, connection.name, who, "Brand-new-pass-7!")).toBe(200);
    const [moved] = await usersOf(tenant, connection.name);
    expect(moved).toMatchObject({ user_id: "auth0|1000", email: who, name: "Never Seen" });
    await store.off();
    expect((await loginThrough(tenant, client, connection.name, who, "Brand-new-pass-7!")).status).toBe(302);
    expect((await loginThrough(tenant, client, connection.name, who, "forgotten-1")).status).toBe(403);
    expect((await store.calls()).login).toBeUndefined();
  });

  it("a user moved without a password (a reset asked for, never finished) is finished by their first login", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1" }]);
    const { connection, client } = await importModeSetup(tenant, store.base);
    const asked = await call("/dbconnections/change_password", {
      method: "POST",
      host: host(tenant),
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, email: who, connection: connection.name }),
    });
    expect(asked.status).toBe(200);
    expect((await usersOf(tenant, connection.name))[0]?.password_hash).toBeNull();
    expect((await loginThrough(tenant, client, connection.name, who, "legacy-pass-1")).status).toBe(302);
    expect((await usersOf(tenant, connection.name))[0]?.password_hash).toMatch(/^\$2[aby]\$/);
    await store.off();
    expect((await loginThrough(tenant, client, connection.name, who, "legacy-pass-1")).status).toBe(302);
    expect(await store.calls()).toMatchObject({ get_user: 1, login: 1 });
  });
});

describe("without import mode the scripts are the store", () => {
  it("sign-up runs create, every login runs login, a reset runs change_password; no password is kept here", async () => {
    const tenant = await createTenant();
    const store = await legacyStore([]);
    const connection = await customConnection(tenant, {
      enabledDatabaseCustomization: true,
      customScripts: LEGACY_SCRIPTS,
      configuration: { BASE: store.base },
    });
    const client = await seedClient(tenant, { callbacks: ["https://app.example.com/callback"] });
    const who = email();
    const created = await signup(tenant, client.client_id, connection.name, who, "Script-pass-1!");
    expect(created.status, await created.clone().text()).toBe(200);
    const [user] = await usersOf(tenant, connection.name);
    expect(user).toMatchObject({ user_id: "auth0|1000", email: who, password_hash: null });
    expect((await signup(tenant, client.client_id, connection.name, who, "Script-pass-1!")).status).toBe(400);

    expect((await loginThrough(tenant, client, connection.name, who, "Script-pass-1!")).status).toBe(302);
    expect((await loginThrough(tenant, client, connection.name, who, "Script-pass-1!")).status).toBe(302);
    expect((await loginThrough(tenant, client, connection.name, who, "wrong-pass-1!")).status).toBe(403);
    expect(await resetPassword(tenant, client.client_id, connection.name, who, "Changed-pass-2!")).toBe(200);
    expect((await loginThrough(tenant, client, connection.name, who, "Changed-pass-2!")).status).toBe(302);
    expect((await usersOf(tenant, connection.name))[0]?.password_hash).toBeNull();
    expect(await store.calls()).toMatchObject({ create: 2, login: 4, change_password: 1 });
  });
});

describe("management updates of a user of a custom database without import mode", () => {
  it("a new email runs change_email, email_verified runs verify, a password runs change_password (no hash here); a failing script writes nothing", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1" }]);
    const connection = await customConnection(tenant, { enabledDatabaseCustomization: true, customScripts: LEGACY_SCRIPTS, configuration: { BASE: store.base } });
    const client = await seedClient(tenant, { callbacks: ["https://app.example.com/callback"] });
    expect((await loginThrough(tenant, client, connection.name, who, "legacy-pass-1")).status).toBe(302);
    const path = `/users/${encodeURIComponent("auth0|1000")}`;
    const renamed = email();
    expect((await onTenant(tenant, "PATCH", path, { email: renamed, email_verified: true })).status).toBe(200);
    expect((await onTenant(tenant, "PATCH", path, { email_verified: true })).status).toBe(200);
    expect((await onTenant(tenant, "PATCH", path, { password: "Changed-by-api-3!" })).status).toBe(200);
    expect(await store.calls()).toMatchObject({ change_email: 1, verify: 1, change_password: 1 });
    expect((await usersOf(tenant, connection.name))[0]).toMatchObject({ email: renamed, password_hash: null });
    expect((await loginThrough(tenant, client, connection.name, renamed, "Changed-by-api-3!")).status).toBe(302);
    await store.off();
    const refused = await onTenant(tenant, "PATCH", path, { email: email() });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ errorCode: "custom_db_script_error" });
    expect((await usersOf(tenant, connection.name))[0]?.email).toBe(renamed);
  });
});

describe("the email-verification link of a user of a custom database without import mode", () => {
  it("runs the verify script first; when the script fails the page says so, nothing is verified and the link stays unspent", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1" }]);
    const connection = await customConnection(tenant, { enabledDatabaseCustomization: true, customScripts: LEGACY_SCRIPTS, configuration: { BASE: store.base } });
    const client = await seedClient(tenant, { callbacks: ["https://app.example.com/callback"] });
    expect((await loginThrough(tenant, client, connection.name, who, "legacy-pass-1")).status).toBe(302);
    const userPath = `/users/${encodeURIComponent("auth0|1000")}`;
    const link = async () => {
      const res = await onTenant(tenant, "POST", "/tickets/email-verification", { user_id: "auth0|1000" });
      expect(res.status, await res.clone().text()).toBe(201);
      const url = new URL(((await res.json()) as { ticket: string }).ticket);
      return () => call(url.pathname + url.search, { host: url.host, redirect: "manual" });
    };
    const verified = async () => ((await (await onTenant(tenant, "GET", userPath)).json()) as { email_verified: boolean }).email_verified;
    expect((await onTenant(tenant, "PATCH", userPath, { email_verified: false })).status).toBe(200);
    expect(await verified()).toBe(false);
    const open = await link();
    expect((await open()).status).toBe(200);
    expect(await store.calls()).toMatchObject({ verify: 1 });
    expect(await verified()).toBe(true);

    expect((await onTenant(tenant, "PATCH", userPath, { email_verified: false })).status).toBe(200);
    const again = await link();
    await store.off();
    const refused = await again();
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("could not be verified");
    expect(await verified()).toBe(false);
    // The link was not spent: it is refused again for the same reason, not as used.
    expect(await (await again()).text()).toContain("could not be verified");
  });
});

describe("deleting a user of a custom database", () => {
  it("runs the delete script first; when it fails the user stays and the API answers 400", async () => {
    const tenant = await createTenant();
    const keep = email();
    const gone = email();
    const store = await legacyStore([{ email: keep, password: "legacy-pass-1" }, { email: gone, password: "legacy-pass-2" }]);
    const connection = await customConnection(tenant, { enabledDatabaseCustomization: true, customScripts: LEGACY_SCRIPTS, configuration: { BASE: store.base } });
    const client = await seedClient(tenant, { callbacks: ["https://app.example.com/callback"] });
    expect((await loginThrough(tenant, client, connection.name, gone, "legacy-pass-2")).status).toBe(302);
    expect((await loginThrough(tenant, client, connection.name, keep, "legacy-pass-1")).status).toBe(302);
    const ids = Object.fromEntries((await usersOf(tenant, connection.name)).map((u) => [u.email, u.user_id]));
    expect((await onTenant(tenant, "DELETE", `/users/${encodeURIComponent(ids[gone] as string)}`)).status).toBe(204);
    expect((await loginThrough(tenant, client, connection.name, gone, "legacy-pass-2")).status).toBe(403);
    await store.off();
    const refused = await onTenant(tenant, "DELETE", `/users/${encodeURIComponent(ids[keep] as string)}`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ errorCode: "custom_db_script_error", message: "The custom database's delete script failed: legacy store answered 503" });
    expect((await usersOf(tenant, connection.name)).map((u) => u.email)).toEqual([keep]);
  });
});

describe("scripts that misbehave give the reference's answers and store no one", () => {
  const cases: [string, string, number, RegExp][] = [
    ["throws", `function login(email, password, callback) { throw new Error("db driver exploded"); }`, 403, /The login script failed: db driver exploded/],
    ["never calls back", `function login(email, password, callback) { /* forgot the callback */ }`, 403, /The login script failed: Script execution timed out/],
    ["returns a malformed profile", `function login(email, password, callback) { callback(null, { email: "not an address", user_id: "a b" }); }`, 403, /malformed profile: The profile's user_id/],
    ["reads a huge body", `function login(email, password, callback) { fetch(configuration.BASE.replace(/\\/legacy\\/.*/, "/data/huge?size=2000000")).then((r) => r.text()).then(() => callback(null, { user_id: "x", email })).catch(callback); }`, 403, /the response is larger than 1048576 bytes/],
    ["loops forever", `function login(email, password, callback) { for (;;) {} }`, 403, /Script execution timed out/],
    ["returns a huge profile", `function login(email, password, callback) { callback(null, { user_id: "big", email, app_metadata: { blob: "x".repeat(3000000) } }); }`, 403, /malformed profile: The profile's app_metadata must not exceed 16 KB/],
  ];
  for (const [what, script, status, description] of cases) {
    it(`a login script that ${what}: 403 with the generic message, an f log with the cause, no user`, async () => {
      const tenant = await createTenant();
      const who = email();
      const store = await legacyStore([{ email: who, password: "legacy-pass-1" }]);
      const { connection, client } = await importModeSetup(tenant, store.base, { customScripts: { login: script, get_user: LEGACY_SCRIPTS.get_user } });
      const res = await loginThrough(tenant, client, connection.name, who, "legacy-pass-1");
      expect(res.status).toBe(status);
      expect(await res.text()).toContain("something went wrong when attempting to log in");
      expect(await usersOf(tenant, connection.name)).toHaveLength(0);
      await relay(tenant);
      const [failure] = await logsOf(tenant, "?q=type:f");
      expect(failure?.description).toMatch(description);
    });
  }

  it("a script that calls back twice keeps the first answer", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([]);
    const twice = `function login(email, password, callback) { callback(null, { user_id: "first", email }); callback(null, { user_id: "second", email }); }`;
    const { connection, client } = await importModeSetup(tenant, store.base, { customScripts: { login: twice, get_user: LEGACY_SCRIPTS.get_user } });
    expect((await loginThrough(tenant, client, connection.name, who, "any-pass-1")).status).toBe(302);
    expect((await usersOf(tenant, connection.name)).map((u) => u.user_id)).toEqual(["auth0|first"]);
  });
});

describe("custom database options are checked when saved (400, nothing stored)", () => {
  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ["a script with a syntax error", { enabledDatabaseCustomization: true, customScripts: { login: "function login(email, password, callback) {" } }, /customScripts\.login: Unexpected token \(1:43\)/],
    ["an unknown script name", { enabledDatabaseCustomization: true, customScripts: { login: LEGACY_SCRIPTS.login, fetch_user: "function f() {}" } }, /customScripts takes the scripts login, get_user, create, verify, change_password, delete, change_email/],
    ["customization without a login script", { enabledDatabaseCustomization: true, customScripts: { get_user: LEGACY_SCRIPTS.get_user } }, /customScripts\.login is required/],
    ["import mode without get_user", { enabledDatabaseCustomization: true, import_mode: true, customScripts: { login: LEGACY_SCRIPTS.login } }, /customScripts\.get_user is required in import mode/],
    ["a script that is no function", { enabledDatabaseCustomization: true, customScripts: { login: "const x = 1;" } }, /customScripts\.login must define one function, such as function login\(email, password, callback\)/],
    ["a script loading a module it may not", { enabledDatabaseCustomization: true, customScripts: { login: `function login(e, p, cb) { require("cloudflare:sockets"); }` } }, /require of this module is not allowed/],
    ["configuration values that are not strings", { enabledDatabaseCustomization: true, customScripts: { login: LEGACY_SCRIPTS.login }, configuration: { BASE: 1 } }, /expected string/i],
    ["import_mode that is not a boolean", { import_mode: "yes" }, /import_mode must be a boolean/],
  ];
  for (const [what, options, message] of refusals) {
    it(`refuses ${what}`, async () => {
      const tenant = await createTenant();
      const name = uniqueId("bad-db").replaceAll("_", "-");
      const res = await onTenant(tenant, "POST", "/connections", { name, strategy: "auth0", options });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { message: string; statusCode: number };
      expect(body.message).toMatch(message);
      expect(((await (await onTenant(tenant, "GET", `/connections?name=${name}`)).json()) as unknown[]).length).toBe(0);
    });
  }

  it("refuses custom database options on a connection of another strategy, and on a PATCH", async () => {
    const tenant = await createTenant();
    const social = await onTenant(tenant, "POST", "/connections", { name: uniqueId("gh").replaceAll("_", "-"), strategy: "github", options: { customScripts: { login: LEGACY_SCRIPTS.login } } });
    expect(social.status).toBe(400);
    const store = await legacyStore([]);
    const { connection } = await importModeSetup(tenant, store.base);
    const patched = await onTenant(tenant, "PATCH", `/connections/${connection.id}`, { options: { enabledDatabaseCustomization: true, customScripts: { login: "function login( {" } } });
    expect(patched.status).toBe(400);
  });

  it("stores configuration sealed: not in the options column, and shown encrypted by the API as the reference does; options sent back as read keep the values", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1" }]);
    const { connection, client } = await importModeSetup(tenant, store.base, { configuration: { BASE: store.base, API_KEY: "s3cret-value" } });
    const [row] = await tenantSql<{ options: string; secrets_enc: string }>(tenant, "SELECT options, secrets_enc FROM connections WHERE id = ?", connection.id);
    expect(row?.options).not.toContain("s3cret-value");
    expect(row?.secrets_enc).not.toContain("s3cret-value");
    expect(row?.secrets_enc).toBeTruthy();
    const read = (await (await onTenant(tenant, "GET", `/connections/${connection.id}`)).json()) as { options: Record<string, unknown> };
    expect(read.options).toMatchObject({ enabledDatabaseCustomization: true, import_mode: true });
    const shown = read.options.configuration as Record<string, string>;
    expect(Object.keys(shown).sort()).toEqual(["API_KEY", "BASE"]);
    expect(JSON.stringify(read)).not.toContain("s3cret-value");
    expect(JSON.stringify(read)).not.toContain(store.base);
    expect(shown.API_KEY).toMatch(/^enc:v1:/);
    // A client that reads the connection and writes its options back (deploy tools do) keeps the values:
    // the login script still reaches the store through BASE.
    const patched = await onTenant(tenant, "PATCH", `/connections/${connection.id}`, { options: read.options });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect((await loginThrough(tenant, client, connection.name, who, "legacy-pass-1")).status).toBe(302);
    // A value sent in clear replaces the stored one; an encrypted value of another key does not open.
    const replaced = await onTenant(tenant, "PATCH", `/connections/${connection.id}`, { options: { ...read.options, configuration: { BASE: "https://legacy.invalid", API_KEY: shown.BASE } } });
    expect(replaced.status).toBe(200);
    const [after] = await tenantSql<{ secrets_enc: string }>(tenant, "SELECT secrets_enc FROM connections WHERE id = ?", connection.id);
    expect(after?.secrets_enc).not.toBe(row?.secrets_enc);
    const reread = (await (await onTenant(tenant, "GET", `/connections/${connection.id}`)).json()) as { options: { configuration: Record<string, string> } };
    expect(reread.options.configuration.API_KEY).toMatch(/^enc:v1:/);
  });
});
