/**
 * The tenant's configuration snapshot (ARCHITECTURE.md §4): what a token request needs, in one read. It
 * composes the readers of the capabilities that own each part (oauth rows, attack protection, guardian,
 * bound actions) on top of the settings store (core/settings.ts), which itself imports no capability.
 */
import type { TenantConfig } from "../../shared/types";
import type { Sql } from "../sql";
import { boundActions } from "./actions/actions";
import { configVersion, getSetting, INHERITS_FROM } from "./core/settings";
import { getGuardian } from "./mfa/guardian";
import { toClient, toClientGrant, toConnection, toResourceServer, toSigningKey } from "./oauth/rows";
import { getAttackProtection } from "./settings/attack-protection";
import { getLoginTemplate, getTheme } from "./settings/branding-theme";

/** One read of everything a token request needs (ARCHITECTURE.md §4). */
export function readConfig(sql: Sql, tenantId: string): TenantConfig {
  return {
    version: configVersion(sql),
    tenantId,
    settings: getSetting(sql, "tenant", {}),
    signingKeys: sql.all<Record<string, unknown>>`SELECT * FROM signing_keys ORDER BY created_at DESC`.map(toSigningKey),
    resourceServers: sql.all<Record<string, unknown>>`SELECT * FROM resource_servers`.map(toResourceServer),
    clients: sql.all<Record<string, unknown>>`SELECT * FROM clients`.map(toClient),
    clientGrants: sql.all<Record<string, unknown>>`SELECT * FROM client_grants`.map(toClientGrant),
    connections: sql.all<Record<string, unknown>>`SELECT * FROM connections ORDER BY created_at, id`.map(toConnection),
    branding: getSetting(sql, "branding", {}),
    brandingTheme: getTheme(sql),
    loginTemplate: getLoginTemplate(sql),
    hookTriggers: sql.all<{ trigger_id: string }>`SELECT DISTINCT trigger_id FROM hooks WHERE enabled = 1 AND template_id IS NULL`.map((r) => r.trigger_id),
    linkingTriggers: sql.all<{ trigger_id: string }>`SELECT DISTINCT trigger_id FROM hooks WHERE enabled = 1 AND template_id = 'account-linking'`.map((r) => r.trigger_id),
    attackProtection: getAttackProtection(sql),
    actions: boundActions(sql),
    guardian: getGuardian(sql),
    inheritsFrom: getSetting<string | null>(sql, INHERITS_FROM, null),
    prompts: getSetting(sql, "prompts", {}),
  };
}
