import core from "../../../migrations/tenant/0001_core.sql";
import authFlows from "../../../migrations/tenant/0002_auth_flows.sql";
import securityFixes from "../../../migrations/tenant/0003_security_fixes.sql";
import signingKeyLifecycle from "../../../migrations/tenant/0004_signing_key_lifecycle.sql";
import outbox from "../../../migrations/tenant/0005_outbox.sql";
import reservedUsers from "../../../migrations/tenant/0006_reserved_users.sql";
import reservedRoles from "../../../migrations/tenant/0007_reserved_roles.sql";
import mfa from "../../../migrations/tenant/0008_mfa.sql";
import { defineMigrations } from "../sql";

/** TenantObject schema, append-only. */
export const tenantMigrations = defineMigrations("tenant", [
  { name: "0001_core", sql: core },
  { name: "0002_auth_flows", sql: authFlows },
  { name: "0003_security_fixes", sql: securityFixes },
  { name: "0004_signing_key_lifecycle", sql: signingKeyLifecycle },
  { name: "0005_outbox", sql: outbox },
  { name: "0006_reserved_users", sql: reservedUsers },
  { name: "0007_reserved_roles", sql: reservedRoles },
  { name: "0008_mfa", sql: mfa },
]);
