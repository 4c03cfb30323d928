import type { TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { ResourceServerRecord } from "../../shared/schemas/resource-servers";
import type { SigningKeyRecord } from "../../shared/schemas/signing-keys";
import type { Settings } from "../settings";

/**
 * Control-plane inheritance at read time (SPEC §1 "Multi-tenancy", "Control-plane inheritance"; issue 15
 * point 2): a child tenant sees the control plane's connections and APIs where it has none of its own (by
 * connection name, by API identifier), marked `inherited` and read-only; its applications accept the
 * control-plane application's callbacks, web origins and logout URLs besides their own; with key
 * inheritance on, the parent's signing keys are published (and sign when the child has no key of its own).
 * Nothing is ever copied: the merge happens in the worker's snapshot, and management reads never write the
 * inherited rows back.
 */

/** A child's parent: the tenant it inherits from, and the control-plane application whose settings merge. */
export interface ParentLink {
  tenantId: string;
  clientId?: string;
}

/** The child's parent link, or null (inheritance off, the control plane itself, or opted out). */
export async function parentLinkOf(settings: Settings, tenantId: string): Promise<ParentLink | null> {
  if (!settings.inheritFromControlPlane || tenantId === settings.controlPlaneTenantId) return null;
  if (!settings.resolveControlPlane) {
    return { tenantId: settings.controlPlaneTenantId, ...(settings.inheritClientId ? { clientId: settings.inheritClientId } : {}) };
  }
  const resolved = await settings.resolveControlPlane({ tenant_id: tenantId });
  if (!resolved?.tenantId || resolved.tenantId === tenantId) return null;
  const clientId = resolved.clientId ?? (resolved.tenantId === settings.controlPlaneTenantId ? settings.inheritClientId : undefined);
  return { tenantId: resolved.tenantId, ...(clientId ? { clientId } : {}) };
}

/** The tenant a child inherits from, or null (inheritance off, the control plane itself, or opted out). */
export async function parentOf(settings: Settings, tenantId: string): Promise<string | null> {
  return (await parentLinkOf(settings, tenantId))?.tenantId ?? null;
}

export type Inherited<T> = T & { inherited: true };

/** The parent's connections the child does not shadow by name. */
export function inheritedConnections(own: readonly ConnectionRecord[], parent: readonly ConnectionRecord[]): Inherited<ConnectionRecord>[] {
  const names = new Set(own.map((c) => c.name.toLowerCase()));
  const ids = new Set(own.map((c) => c.id));
  return parent.filter((c) => !names.has(c.name.toLowerCase()) && !ids.has(c.id)).map((c) => ({ ...c, inherited: true as const }));
}

/** The parent's APIs the child does not shadow by identifier; the system (management) API is never inherited. */
export function inheritedResourceServers(
  own: readonly ResourceServerRecord[],
  parent: readonly ResourceServerRecord[],
): Inherited<ResourceServerRecord>[] {
  const identifiers = new Set(own.map((r) => r.identifier));
  const ids = new Set(own.map((r) => r.id));
  return parent
    .filter((r) => !r.is_system && !identifiers.has(r.identifier) && !ids.has(r.id))
    .map((r) => ({ ...r, inherited: true as const }));
}

/** The parent's own signing keys (never keys it inherits itself), marked inherited: public parts are published by the child. */
export function inheritedSigningKeys(own: readonly SigningKeyRecord[], parent: readonly SigningKeyRecord[]): SigningKeyRecord[] {
  const kids = new Set(own.map((k) => k.kid));
  return parent.filter((k) => !k.inherited && !kids.has(k.kid)).map((k) => ({ ...k, inherited: true }));
}

const union = (own: readonly string[], extra: readonly string[]) => [...new Set([...own, ...extra])];

/**
 * The child's applications with the control-plane application's callbacks, web origins and logout URLs
 * merged in (SPEC "Control-plane inheritance": "client settings (web_origins, callbacks merged)"). Only the
 * snapshot carries the union; the child's rows, and its management reads, keep their own values.
 */
export function mergeClientSettings(own: readonly ClientRecord[], template: ClientRecord | undefined): ClientRecord[] {
  if (!template) return [...own];
  return own.map((client) => ({
    ...client,
    callbacks: union(client.callbacks, template.callbacks),
    web_origins: union(client.web_origins, template.web_origins),
    allowed_logout_urls: union(client.allowed_logout_urls, template.allowed_logout_urls),
  }));
}

/** What a child takes from its parent besides connections and APIs. */
export interface MergeOptions {
  /** The control-plane application whose URLs every child application accepts too. */
  clientId?: string;
  /** Publish the parent's signing keys (and sign with them when the child has no key of its own). */
  signingKeys?: boolean;
}

/** The child's snapshot with the parent's items appended after its own. */
export function mergeInherited(own: TenantConfig, parent: TenantConfig, options: MergeOptions = {}): TenantConfig {
  const template = options.clientId ? parent.clients.find((client) => client.client_id === options.clientId) : undefined;
  return {
    ...own,
    connections: [...own.connections, ...inheritedConnections(own.connections, parent.connections)],
    resourceServers: [...own.resourceServers, ...inheritedResourceServers(own.resourceServers, parent.resourceServers)],
    clients: mergeClientSettings(own.clients, template),
    // The parent's webhooks run in the child's flows too (read at delivery time, never copied).
    hookTriggers: union(own.hookTriggers, parent.hookTriggers),
    ...(options.signingKeys ? { signingKeys: [...own.signingKeys, ...inheritedSigningKeys(own.signingKeys, parent.signingKeys)] } : {}),
  };
}
