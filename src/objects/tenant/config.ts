import { boundActions } from "./actions";
import { getAttackProtection } from "./attack-protection";
import { getGuardian } from "./guardian";
import type { TenantConfig } from "../../shared/types";
import { json, type Sql } from "../sql";
import { toClient, toClientGrant, toConnection, toResourceServer, toSigningKey } from "./rows";

/** The configuration version; every configuration write bumps it so worker caches refetch. */
export function configVersion(sql: Sql): number {
  return Number(sql.first<{ value: string }>`SELECT value FROM _settings WHERE key = 'config_version'`?.value ?? 0);
}

/** Bumped by `TenantRpc.commit(fn, { config: true })` in the write's own transaction; the seed calls it too. */
export function bumpConfigVersion(sql: Sql): void {
  sql.run`UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'`;
}

/** The `_settings` key of the parent whose webhooks the relay also calls (control-plane inheritance). */
export const INHERITS_FROM = "inherits_from";

export function getSetting<T>(sql: Sql, key: string, fallback: T): T {
  return json(sql.first<{ value: string }>`SELECT value FROM _settings WHERE key = ${key}`?.value, fallback);
}

export function putSetting(sql: Sql, key: string, value: unknown): void {
  sql.run`INSERT INTO _settings (key, value) VALUES (${key}, ${JSON.stringify(value)})
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
}

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
    hookTriggers: sql.all<{ trigger_id: string }>`SELECT DISTINCT trigger_id FROM hooks WHERE enabled = 1 AND template_id IS NULL`.map((r) => r.trigger_id),
    linkingTriggers: sql.all<{ trigger_id: string }>`SELECT DISTINCT trigger_id FROM hooks WHERE enabled = 1 AND template_id = 'account-linking'`.map((r) => r.trigger_id),
    attackProtection: getAttackProtection(sql),
    actions: boundActions(sql),
    guardian: getGuardian(sql),
    inheritsFrom: getSetting<string | null>(sql, INHERITS_FROM, null),
  };
}
