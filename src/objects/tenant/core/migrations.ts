import core from "../../../../migrations/tenant/0001_core.sql";
import authFlows from "../../../../migrations/tenant/0002_auth_flows.sql";
import securityFixes from "../../../../migrations/tenant/0003_security_fixes.sql";
import signingKeyLifecycle from "../../../../migrations/tenant/0004_signing_key_lifecycle.sql";
import outbox from "../../../../migrations/tenant/0005_outbox.sql";
import users from "../../../../migrations/tenant/0006_users.sql";
import roles from "../../../../migrations/tenant/0007_roles.sql";
import resourceServerSigningSecret from "../../../../migrations/tenant/0008_resource_server_signing_secret.sql";
import cleanup from "../../../../migrations/tenant/0009_cleanup.sql";
import organizations from "../../../../migrations/tenant/0010_organizations.sql";
import actions from "../../../../migrations/tenant/0011_actions.sql";
import mfa from "../../../../migrations/tenant/0012_mfa.sql";
import jobs from "../../../../migrations/tenant/0013_jobs.sql";
import { defineMigrations } from "../../sql";
import schemaUpgrades from "../../../../migrations/tenant/0014_schema_upgrades.sql";
import jobMailAndRetention from "../../../../migrations/tenant/0015_job_mail_and_retention.sql";
import sessionDevice from "../../../../migrations/tenant/0016_session_device.sql";
import sessionMetadata from "../../../../migrations/tenant/0017_session_metadata.sql";
import passwordHistory from "../../../../migrations/tenant/0018_password_history.sql";
import deviceCodesAndPushedRequests from "../../../../migrations/tenant/0019_device_codes_and_pushed_requests.sql";
import userGrants from "../../../../migrations/tenant/0020_user_grants.sql";
import connectionEnabledClients from "../../../../migrations/tenant/0021_connection_enabled_clients.sql";
import resourceServerProofOfPossession from "../../../../migrations/tenant/0022_resource_server_proof_of_possession.sql";
import actionRedirectsAndCache from "../../../../migrations/tenant/0023_action_redirects_and_cache.sql";

/** TenantObject schema, append-only. */
export const tenantMigrations = defineMigrations("tenant", [
  { name: "0001_core", sql: core },
  { name: "0002_auth_flows", sql: authFlows },
  { name: "0003_security_fixes", sql: securityFixes },
  { name: "0004_signing_key_lifecycle", sql: signingKeyLifecycle },
  { name: "0005_outbox", sql: outbox },
  { name: "0006_users", sql: users },
  { name: "0007_roles", sql: roles },
  { name: "0008_resource_server_signing_secret", sql: resourceServerSigningSecret },
  { name: "0009_cleanup", sql: cleanup },
  { name: "0010_organizations", sql: organizations },
  { name: "0011_actions", sql: actions },
  { name: "0012_mfa", sql: mfa },
  { name: "0013_jobs", sql: jobs },
  { name: "0014_schema_upgrades", sql: schemaUpgrades },
  { name: "0015_job_mail_and_retention", sql: jobMailAndRetention },
  { name: "0016_session_device", sql: sessionDevice },
  { name: "0017_session_metadata", sql: sessionMetadata },
  { name: "0018_password_history", sql: passwordHistory },
  { name: "0019_device_codes_and_pushed_requests", sql: deviceCodesAndPushedRequests },
  { name: "0020_user_grants", sql: userGrants },
  { name: "0021_connection_enabled_clients", sql: connectionEnabledClients },
  { name: "0022_resource_server_proof_of_possession", sql: resourceServerProofOfPossession },
  { name: "0023_action_redirects_and_cache", sql: actionRedirectsAndCache },
]);
