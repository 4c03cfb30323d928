import { DEFAULT_DATABASE_CONNECTION } from "../../../shared/schemas/connections";
import { normalizeEmail } from "../../../shared/schemas/users";
import { randomId } from "../../../shared/crypto/random";
import { CREDENTIAL_READ_SCOPES, OPERATOR_ROLES, operatorRoleScopes } from "../../../shared/console";
import { CURRENT_USER_SCOPES } from "../../../shared/scopes";
import type { TenantSeed } from "../../../shared/types";
import type { Sql } from "../../sql";
import { bumpConfigVersion, getSetting, putSetting } from "../core/settings";
import { hasSigningKey, insertSigningKey } from "./signing-keys";


/**
 * The idempotent tenant seed (SPEC "Provisioning hook entry points"): a signing key, the management API
 * resource server, the default database connection and, on the control plane, the M2M client with a grant
 * for every management scope plus the admin user. Running it again changes nothing except keeping the
 * control-plane client's secret and the management scopes in step with the deployment's configuration.
 */
export function seedTenant(sql: Sql, seed: TenantSeed, now: number): { created: string[] } {
  const created: string[] = [];
  if (seed.signingKey && !hasSigningKey(sql, "jwt_signing", seed.signingKey.alg, now)) {
    insertSigningKey(sql, seed.signingKey, now, now);
    created.push("signing_key");
  }
  // The API defines the current-user scopes too; the control-plane client's grant does not need them.
  const apiScopes = [...seed.managementScopes, ...CURRENT_USER_SCOPES];
  const scopes = JSON.stringify(apiScopes.map((value) => ({ value, description: value })));
  const inserted = sql.run`INSERT INTO resource_servers (id, identifier, name, scopes, is_system, created_at, updated_at)
    VALUES (${randomId("rs_")}, ${seed.managementAudience}, 'Gatehouse Management API', ${scopes}, 1, ${now}, ${now})
    ON CONFLICT (identifier) DO UPDATE SET scopes = excluded.scopes WHERE scopes <> excluded.scopes`;
  if (inserted) created.push("management_api");
  if (
    sql.run`INSERT OR IGNORE INTO connections (id, name, strategy, options, created_at, updated_at)
      VALUES (${randomId("con_")}, ${DEFAULT_DATABASE_CONNECTION}, 'auth0', '{}', ${now}, ${now})`
  ) {
    created.push("connection");
  }
  if (seed.controlPlaneClient) seedControlPlaneClient(sql, seed, now, created);
  const adminEmail = seed.admin ? normalizeEmail(seed.admin.email) : "";
  if (seed.admin && !sql.first`SELECT 1 FROM users WHERE connection = ${DEFAULT_DATABASE_CONNECTION} AND email = ${adminEmail}`) {
    sql.run`INSERT INTO users (user_id, connection, email, email_verified, password_hash, name, created_at, updated_at)
      VALUES (${`auth0|${randomId()}`}, ${DEFAULT_DATABASE_CONNECTION}, ${adminEmail}, 1,
        ${seed.admin.password_hash}, ${adminEmail}, ${now}, ${now})`;
    created.push("admin");
  }
  if (seed.console) seedConsole(sql, seed, now, created);
  if (created.length) bumpConfigVersion(sql);
  return { created };
}

function seedControlPlaneClient(sql: Sql, seed: TenantSeed, now: number, created: string[]): void {
  const client = seed.controlPlaneClient;
  if (!client) return;
  const grantTypes = JSON.stringify(["client_credentials"]);
  sql.run`INSERT INTO clients (client_id, name, app_type, client_secret_enc, token_endpoint_auth_method,
      grant_types, is_system, created_at, updated_at)
    VALUES (${client.client_id}, ${client.name}, 'non_interactive', ${client.client_secret_enc},
      'client_secret_post', ${grantTypes}, 1, ${now}, ${now})
    ON CONFLICT (client_id) DO UPDATE SET client_secret_enc = excluded.client_secret_enc`;
  const scope = JSON.stringify(seed.managementScopes);
  const grant = sql.run`INSERT INTO client_grants (id, client_id, audience, scope, created_at, updated_at)
    VALUES (${randomId("cgr_")}, ${client.client_id}, ${seed.managementAudience}, ${scope}, ${now}, ${now})
    ON CONFLICT (client_id, audience) DO UPDATE SET scope = excluded.scope WHERE scope <> excluded.scope`;
  if (grant) created.push("control_plane_grant");
}

/**
 * The admin console (issue 30): its first-party application (authorization code with PKCE, a secret; its
 * callback follows the deployment's issuer) and the operator roles. The roles are created once, with their
 * management permissions; the admin named then gets the Admin role. An operator edits them like any role.
 */
function seedConsole(sql: Sql, seed: TenantSeed, now: number, created: string[]): void {
  const app = seed.console;
  if (!app) return;
  const grantTypes = JSON.stringify(["authorization_code"]);
  // Organizations allowed: a tenant admin logs in through the tenant's organization (/admin/login?organization=).
  const extra = JSON.stringify({ organization_usage: "allow" });
  const changed = sql.run`INSERT INTO clients (client_id, name, app_type, client_secret_enc, token_endpoint_auth_method,
      grant_types, callbacks, allowed_logout_urls, is_first_party, is_system, extra, created_at, updated_at)
    VALUES (${app.client_id}, ${app.name}, 'regular_web', ${app.client_secret_enc}, 'client_secret_post', ${grantTypes},
      ${JSON.stringify(app.callbacks)}, ${JSON.stringify(app.logout_urls)}, 1, 1, ${extra}, ${now}, ${now})
    ON CONFLICT (client_id) DO UPDATE SET client_secret_enc = excluded.client_secret_enc, callbacks = excluded.callbacks,
      allowed_logout_urls = excluded.allowed_logout_urls,
      extra = json_set(coalesce(nullif(clients.extra, ''), '{}'), '$.organization_usage', 'allow')
    WHERE client_secret_enc IS NOT excluded.client_secret_enc OR callbacks <> excluded.callbacks OR allowed_logout_urls <> excluded.allowed_logout_urls
      OR json_extract(coalesce(nullif(clients.extra, ''), '{}'), '$.organization_usage') IS NOT 'allow'`;
  if (changed) created.push("console_client");
  let adminRole: string | null = null;
  for (const role of OPERATOR_ROLES) {
    if (sql.first`SELECT 1 FROM roles WHERE name = ${role.name}`) continue;
    const id = randomId("rol_");
    sql.run`INSERT INTO roles (id, name, description, created_at, updated_at) VALUES (${id}, ${role.name}, ${role.description}, ${now}, ${now})`;
    for (const scope of operatorRoleScopes(role.verbs, seed.managementScopes)) {
      sql.run`INSERT INTO role_permissions (role_id, resource_server_identifier, permission_name, created_at)
        VALUES (${id}, ${seed.managementAudience}, ${scope}, ${now})`;
    }
    if ((role.verbs as readonly string[]).includes("delete")) adminRole = id;
    created.push("operator_role");
  }
  grantNewScopesToOperatorRoles(sql, seed, now);
  withdrawCredentialReads(sql, seed.managementAudience);
  const email = app.adminEmail ? normalizeEmail(app.adminEmail) : "";
  const admin = email ? sql.first<{ user_id: string }>`SELECT user_id FROM users WHERE connection = ${DEFAULT_DATABASE_CONNECTION} AND email = ${email}` : null;
  if (adminRole && admin) sql.run`INSERT OR IGNORE INTO user_roles (user_id, role_id, created_at) VALUES (${admin.user_id}, ${adminRole}, ${now})`;
}

/** Setting: the seeded Editor and Viewer roles gave up the credential reads (once). */
const CREDENTIAL_READS_WITHDRAWN = "operator_roles_credential_reads_withdrawn";

/**
 * Security review (review5): Editor and Viewer roles seeded before {@link CREDENTIAL_READ_SCOPES} existed
 * hold them (a Viewer read every client secret). They are taken from those two seeded roles once, when the
 * seed next runs (bootstrap runs it when the management scopes or the console's application changed); an
 * operator who gives them back afterwards decides so.
 */
function withdrawCredentialReads(sql: Sql, audience: string): void {
  if (getSetting<boolean>(sql, CREDENTIAL_READS_WITHDRAWN, false)) return;
  for (const role of OPERATOR_ROLES) {
    if ((role.verbs as readonly string[]).includes("delete")) continue;
    const row = sql.first<{ id: string }>`SELECT id FROM roles WHERE name = ${role.name}`;
    if (!row) continue;
    for (const scope of CREDENTIAL_READ_SCOPES) {
      sql.run`DELETE FROM role_permissions WHERE role_id = ${row.id} AND resource_server_identifier = ${audience} AND permission_name = ${scope}`;
    }
  }
  putSetting(sql, CREDENTIAL_READS_WITHDRAWN, true);
}

/** Setting: the management scopes the operator roles were last brought up to date with. */
const OPERATOR_SCOPES_SEEN = "operator_role_scopes_seen";

/**
 * A release that adds management scopes (e.g. `read:stats`) gives them to the seeded operator roles whose
 * verbs cover them, once: only scopes this deployment has never seen are added, so a permission an operator
 * removed from a role on purpose stays removed. A role renamed or deleted by an operator is left alone.
 */
function grantNewScopesToOperatorRoles(sql: Sql, seed: TenantSeed, now: number): void {
  // A deployment seeded before this record existed: what its Admin role holds is what it has seen (a scope an
  // operator removed from Admin itself comes back once); no Admin role, everything current.
  const recorded = getSetting<string[] | null>(sql, OPERATOR_SCOPES_SEEN, null);
  const admin = recorded ? null : sql.first<{ id: string }>`SELECT id FROM roles WHERE name = ${OPERATOR_ROLES[0].name}`;
  const held = admin ? sql.all<{ p: string }>`SELECT permission_name AS p FROM role_permissions WHERE role_id = ${admin.id}`.map((r) => r.p) : null;
  const seen = new Set(recorded ?? (held?.length ? held : seed.managementScopes));
  const fresh = seed.managementScopes.filter((scope) => !seen.has(scope));
  for (const role of OPERATOR_ROLES) {
    const row = fresh.length ? sql.first<{ id: string }>`SELECT id FROM roles WHERE name = ${role.name}` : null;
    if (!row) continue;
    for (const scope of operatorRoleScopes(role.verbs, fresh)) {
      sql.run`INSERT OR IGNORE INTO role_permissions (role_id, resource_server_identifier, permission_name, created_at)
        VALUES (${row.id}, ${seed.managementAudience}, ${scope}, ${now})`;
    }
  }
  if (fresh.length || recorded === null) putSetting(sql, OPERATOR_SCOPES_SEEN, seed.managementScopes);
}
