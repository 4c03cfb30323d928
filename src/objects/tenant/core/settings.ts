import { json, type Sql } from "../../sql";

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
