/**
 * auth0-deploy-cli's round trip against `npm start -- --https`, run by test/e2e/deploy-cli-roundtrip.e2e.test.ts
 * in a child process (NODE_EXTRA_CA_CERTS is read only when Node starts; the CLI builds its own SDK client
 * and cannot take a custom fetch). Seeds tenant A through the unmodified auth0 SDK, exports it with the
 * CLI's programmatic `dump` (YAML, defaults: no exclusions), imports that export into a fresh tenant B with
 * `deploy`, exports B, and prints both exports.
 *
 * Input (environment): GATEHOUSE_PORT, GATEHOUSE_CLIENT_SECRET (the control plane's), RUN_ID, WORK_DIR, THEME (JSON).
 * Output: one JSON line {first, second} (the tenant.yaml texts) on stdout, or the error on stderr.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ManagementClient } from "auth0";
import { deploy, dump } from "auth0-deploy-cli";

const { GATEHOUSE_PORT: port, GATEHOUSE_CLIENT_SECRET: cpSecret, RUN_ID: runId, WORK_DIR: workDir } = process.env;
const audience = "urn:gatehouse:management";
const controlPlane = new ManagementClient({ domain: `localhost:${port}`, clientId: "gatehouse-control-plane", clientSecret: cpSecret, audience });

async function cp(path, init = {}) {
  const res = await controlPlane.fetch(path, { ...init, headers: { "content-type": "application/json", ...init.headers } });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A tenant with a client allowed every management scope: its token, as deploy-cli's AUTH0_ACCESS_TOKEN. */
async function newTenant(id) {
  await cp("/tenants", { method: "POST", body: JSON.stringify({ id }) });
  const headers = { "tenant-id": id };
  const client = await cp("/clients", { method: "POST", headers, body: JSON.stringify({ name: "Deploy CLI", app_type: "non_interactive", grant_types: ["client_credentials"] }) });
  const rs = (await cp("/resource-servers", { headers })).find((r) => r.identifier === audience);
  await cp("/client-grants", { method: "POST", headers, body: JSON.stringify({ client_id: client.client_id, audience, scope: rs.scopes.map((s) => s.value) }) });
  const res = await fetch(`https://${id}.localhost:${port}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience }),
  });
  if (res.status !== 200) throw new Error(`token for ${id}: ${res.status} ${await res.text()}`);
  const token = (await res.json()).access_token;
  return { id, token, sdk: new ManagementClient({ domain: `${id}.localhost:${port}`, token }) };
}

async function seed({ sdk }) {
  const api = await sdk.resourceServers.create({ name: "Orders API", identifier: "https://orders.example.com", scopes: [{ value: "read:orders", description: "Read orders" }] });
  const role = await sdk.roles.create({ name: "Order reader", description: "Reads orders" });
  await sdk.roles.permissions.add(role.id, { permissions: [{ resource_server_identifier: api.identifier, permission_name: "read:orders" }] });
  const web = await sdk.clients.create({ name: "Web App", app_type: "regular_web", callbacks: ["https://app.example.com/callback"], grant_types: ["authorization_code", "refresh_token"] });
  const spa = await sdk.clients.create({ name: "SPA", app_type: "spa", callbacks: ["https://spa.example.com/callback"], grant_types: ["authorization_code", "refresh_token"] });
  const m2m = await sdk.clients.create({ name: "Worker", app_type: "non_interactive", grant_types: ["client_credentials"] });
  const grant = await sdk.clientGrants.create({ client_id: m2m.client_id, audience: api.identifier, scope: ["read:orders"], organization_usage: "allow" });
  await sdk.connections.create({ name: "customers", strategy: "auth0", enabled_clients: [web.client_id, spa.client_id], options: { passwordPolicy: "good" } });
  const org = await sdk.organizations.create({ name: "acme", display_name: "Acme" });
  const conn = (await sdk.connections.list({ name: "customers" })).data[0];
  await sdk.organizations.enabledConnections.add(org.id, { connection_id: conn.id, assign_membership_on_login: false });
  await sdk.organizations.clientGrants.create(org.id, { grant_id: grant.id });
  const member = await sdk.users.create({ connection: "customers", email: "member@example.com", password: "Unlisted-Gatehouse-7Qz!" });
  await sdk.organizations.members.create(org.id, { members: [member.user_id] });
  const action = await sdk.actions.create({
    name: "add-claim",
    supported_triggers: [{ id: "post-login", version: "v3" }],
    code: "exports.onExecutePostLogin = async (event, api) => { api.idToken.setCustomClaim('https://example.com/k', 'v'); };",
  });
  await new Promise((r) => setTimeout(r, 500));
  await sdk.actions.deploy(action.id);
  await sdk.actions.triggers.bindings.updateMany("post-login", { bindings: [{ ref: { type: "action_id", value: action.id }, display_name: "add-claim" }] });
  await sdk.emailTemplates.create({ template: "verify_email", body: "<p>Verify {{ user.email }}</p>", from: "help@example.com", subject: "Verify", syntax: "liquid", enabled: true });
  await sdk.prompts.customText.set("login", "en", { login: { title: "Welcome to Acme" } });
  await sdk.branding.themes.create(THEME);
}

/** A complete universal-login theme (test/helpers/theme.ts, passed by the test: the reference requires every group). */
const THEME = JSON.parse(process.env.THEME);

const config = (t) => ({ AUTH0_DOMAIN: `${t.id}.localhost:${port}`, AUTH0_ACCESS_TOKEN: t.token, AUTH0_ALLOW_DELETE: false });

async function exportTo(t, folder) {
  mkdirSync(folder, { recursive: true });
  await dump({ output_folder: folder, format: "yaml", config: config(t) });
  return readFileSync(join(folder, "tenant.yaml"), "utf8");
}

const a = await newTenant(`dca${runId}`);
await seed(a);
const first = await exportTo(a, join(workDir, "a"));
// The round trip: the export imported into a fresh tenant, which is exported in turn.
const b = await newTenant(`dcb${runId}`);
await deploy({ input_file: join(workDir, "a", "tenant.yaml"), config: config(b) });
const second = await exportTo(b, join(workDir, "b"));
console.log(JSON.stringify({ first, second }));
