import registry from "../../../migrations/platform/0001_registry.sql";
import outbox from "../../../migrations/platform/0002_outbox.sql";
import domainsPlaceholder from "../../../migrations/platform/0003_domains_placeholder.sql";
import deployments from "../../../migrations/platform/0004_deployments.sql";
import { defineMigrations } from "../sql";

/** PlatformObject schema, append-only. */
export const platformMigrations = defineMigrations("platform", [
  { name: "0001_registry", sql: registry },
  { name: "0002_outbox", sql: outbox },
  // Branch `deploy` only: replaced at merge by the domains branch's 0003 (issue 15).
  { name: "0003_domains_placeholder", sql: domainsPlaceholder },
  { name: "0004_deployments", sql: deployments },
]);
