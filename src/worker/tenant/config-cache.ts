import { now as currentTime } from "../../shared/clock";
import type { TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { Settings } from "../settings";
import { mergeInherited, parentLinkOf } from "./inheritance";

/**
 * Per-isolate cache of tenant configuration snapshots (ARCHITECTURE.md §4). A snapshot is served without a
 * round trip for `configCacheTtlMs`; after that, one cheap `getConfigVersion()` call either extends it or
 * triggers a refetch. Writes made through this isolate invalidate at once.
 */
interface Entry {
  config: TenantConfig;
  checkedAt: number;
  /** Derived values memoized per snapshot (imported keys, decrypted secrets, origin sets). */
  memo: Map<string, unknown>;
}

const entries = new Map<string, Entry>();

/** A stub of the tenant object, narrowed to what the cache calls. */
export interface ConfigSource {
  getConfig(tenantId: string): Promise<TenantConfig>;
  getConfigVersion(): Promise<number>;
}

async function load(tenantId: string, source: ConfigSource, settings: Settings, now: number): Promise<Entry> {
  const current = entries.get(tenantId);
  if (current && now - current.checkedAt < settings.configCacheTtlMs) return current;
  if (current && (await source.getConfigVersion()) === current.config.version) {
    current.checkedAt = now;
    return current;
  }
  const entry: Entry = { config: await source.getConfig(tenantId), checkedAt: now, memo: new Map() };
  entries.set(tenantId, entry);
  return entry;
}

/**
 * Only settled snapshots are shared between requests. A pending refresh is never handed to another request:
 * workerd forbids one request from awaiting I/O started by another ("Cannot perform I/O on behalf of a
 * different request"), which showed up as rare 500s under load. Concurrent cold misses each read once.
 */
async function entryFor(tenantId: string, source: ConfigSource, settings: Settings): Promise<Entry> {
  const now = currentTime();
  const own = await load(tenantId, source, settings, now);
  const link = settings.configSource ? await parentLinkOf(settings, tenantId) : null;
  if (settings.configSource) await keepHooksLink(tenantId, own.config, link?.tenantId ?? null, settings);
  if (!link || !settings.configSource) return own;
  // Inheritance (issue 15 point 2): the child's snapshot merged with its parent's, rebuilt when either changes.
  const parentId = link.tenantId;
  const parent = await load(parentId, settings.configSource(parentId), settings, now);
  const key = `${tenantId}<${parentId}`;
  const options = `${link.clientId ?? ""}|${settings.inheritSigningKeys}`;
  const current = merged.get(key);
  if (current && current.own === own.config && current.parent === parent.config && current.options === options) return current.entry;
  const config = mergeInherited(own.config, parent.config, { ...(link.clientId ? { clientId: link.clientId } : {}), signingKeys: settings.inheritSigningKeys });
  const entry: Entry = { config, checkedAt: now, memo: new Map() };
  merged.set(key, { own: own.config, parent: parent.config, options, entry });
  return entry;
}

/**
 * Keeps the child object's record of its parent in step with the host's resolution (issue 15 point 2): the
 * child's relay reads the parent's webhooks at delivery time, and the object cannot run host options. Only
 * the link is written (once per change, audited as a system write); no inherited value is stored.
 */
async function keepHooksLink(tenantId: string, own: TenantConfig, parentId: string | null, settings: Settings): Promise<void> {
  if ((own.inheritsFrom ?? null) === parentId || !settings.configSource) return;
  await settings.configSource(tenantId).hooks().linkParent(parentId, { actor: { type: "system", id: null } });
  // Not a configuration change (the version stays): this snapshot now knows the link too.
  own.inheritsFrom = parentId;
}

/** Merged snapshots of inheriting tenants, keyed `child<parent`. */
const merged = new Map<string, { own: TenantConfig; parent: TenantConfig; options: string; entry: Entry }>();

/**
 * The entry when it answers without any I/O or inheritance work: still trusted, the tenant inherits from no
 * one (no parent link to resolve) and its object records no parent (no link to clear). Exactly the cases where
 * entryFor would return it after three awaited calls that do nothing (issue 31: most requests of a hot tenant).
 */
function settledEntry(tenantId: string, settings: Settings): Entry | undefined {
  const current = entries.get(tenantId);
  if (!current || currentTime() - current.checkedAt >= settings.configCacheTtlMs) return undefined;
  if (!settings.configSource) return current;
  const inherits = settings.inheritFromControlPlane && tenantId !== settings.controlPlaneTenantId;
  return inherits || (current.config.inheritsFrom ?? null) !== null ? undefined : current;
}

/** The tenant's configuration snapshot. */
export async function tenantConfig(tenantId: string, source: ConfigSource, settings: Settings): Promise<TenantConfig> {
  return (settledEntry(tenantId, settings) ?? (await entryFor(tenantId, source, settings))).config;
}

/**
 * A value derived from the snapshot (an imported CryptoKey, a decrypted secret), computed once per
 * snapshot version and dropped with it. `compute` must do no I/O (only CPU and WebCrypto): its promise is
 * shared with other requests.
 */
export async function memoized<T>(
  tenantId: string,
  source: ConfigSource,
  settings: Settings,
  key: string,
  compute: (config: TenantConfig) => Promise<T> | T,
): Promise<T> {
  const entry = settledEntry(tenantId, settings) ?? (await entryFor(tenantId, source, settings));
  if (!entry.memo.has(key)) entry.memo.set(key, Promise.resolve(compute(entry.config)));
  try {
    return (await entry.memo.get(key)) as T;
  } catch (error) {
    entry.memo.delete(key);
    throw error;
  }
}

/** Drops a tenant's snapshot (after a configuration write through this isolate, or tenant deletion). */
export function invalidateTenantConfig(tenantId?: string): void {
  if (tenantId === undefined) {
    entries.clear();
    merged.clear();
    return;
  }
  entries.delete(tenantId);
  for (const key of merged.keys()) if (key.startsWith(`${tenantId}<`) || key.endsWith(`<${tenantId}`)) merged.delete(key);
}

/** A client of the snapshot by id (undefined when unknown): the one lookup every route uses. */
export function clientIn(config: TenantConfig, clientId: string | null | undefined): ClientRecord | undefined {
  return clientId ? config.clients.find((client) => client.client_id === clientId) : undefined;
}
