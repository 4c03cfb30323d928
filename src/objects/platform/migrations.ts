import registry from "../../../migrations/platform/0001_registry.sql";
import outbox from "../../../migrations/platform/0002_outbox.sql";
import customDomains from "../../../migrations/platform/0003_custom_domains.sql";
import deployments from "../../../migrations/platform/0004_deployments.sql";
import defaultCustomDomain from "../../../migrations/platform/0005_default_custom_domain.sql";
import deploySecrets from "../../../migrations/platform/0006_deploy_secrets.sql";
import { defineMigrations } from "../sql";

/** PlatformObject schema, append-only. */
export const platformMigrations = defineMigrations("platform", [
  { name: "0001_registry", sql: registry },
  { name: "0002_outbox", sql: outbox },
  { name: "0003_custom_domains", sql: customDomains },
  { name: "0004_deployments", sql: deployments },
  { name: "0005_default_custom_domain", sql: defaultCustomDomain },
  { name: "0006_deploy_secrets", sql: deploySecrets },
]);
