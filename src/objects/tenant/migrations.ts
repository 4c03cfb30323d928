import core from "../../../migrations/tenant/0001_core.sql";
import { defineMigrations } from "../sql";

/** TenantObject schema, append-only. */
export const tenantMigrations = defineMigrations("tenant", [{ name: "0001_core", sql: core }]);
