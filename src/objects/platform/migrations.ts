import registry from "../../../migrations/platform/0001_registry.sql";
import outbox from "../../../migrations/platform/0002_outbox.sql";
import customDomains from "../../../migrations/platform/0003_custom_domains.sql";
import deployments from "../../../migrations/platform/0004_deployments.sql";
import reserved5 from "../../../migrations/platform/0005_reserved_tenants15.sql";
import reserved6 from "../../../migrations/platform/0006_reserved_inherit15.sql";
import deploySecrets from "../../../migrations/platform/0007_deploy_secrets.sql";
import { defineMigrations } from "../sql";

/** PlatformObject schema, append-only. */
export const platformMigrations = defineMigrations("platform", [
  { name: "0001_registry", sql: registry },
  { name: "0002_outbox", sql: outbox },
  { name: "0003_custom_domains", sql: customDomains },
  { name: "0004_deployments", sql: deployments },
  // Placeholders (branch deploy16 only): the numbers other helpers reserved; dropped when their migrations merge.
  { name: "0005_reserved_tenants15", sql: reserved5 },
  { name: "0006_reserved_inherit15", sql: reserved6 },
  { name: "0007_deploy_secrets", sql: deploySecrets },
]);
