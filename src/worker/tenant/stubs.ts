import { now as currentTime } from "../../shared/clock";
import { codeShardName, userObjectName } from "../../shared/object-names";
import { HostCache } from "../routing/host-cache";
import type { TenantDirectory } from "../routing/resolve-tenant";
import type { Settings } from "../settings";
import type { ConfigSource } from "./config-cache";

/** The registry singleton. */
export const platform = (env: Env) => env.PLATFORM.getByName("platform");

/** One tenant's object. */
export const tenantObject = (env: Env, tenantId: string) => env.TENANT.getByName(tenantId);

/**
 * A tenant's object as the configuration cache reads it: the stub is made only when the cache misses (most
 * token requests are served from the isolate's snapshot and never need it).
 */
export function tenantConfigSource(env: Env, tenantId: string): ConfigSource {
  let stub: ReturnType<typeof tenantObject> | undefined;
  const object = () => (stub ??= tenantObject(env, tenantId));
  return { getConfig: (id) => object().getConfig(id), getConfigVersion: () => object().getConfigVersion() };
}

/** One user's object inside a tenant. */
export const userObject = (env: Env, tenantId: string, userId: string) => env.USER.getByName(userObjectName(tenantId, userId));

/** The code shard that serializes a sealed authorization code's single use (issue 31). */
export const codeShard = (env: Env, tenantId: string, codeId: string) => env.CODES.getByName(codeShardName(tenantId, codeId));

let known: HostCache<true> | undefined;

/** Forgets cached tenant existence (a tenant was created or deleted through this isolate). */
export function forgetTenant(id?: string): void {
  if (id === undefined) known?.clear();
  else known?.delete(id);
}

/**
 * Whether a tenant exists, cached per isolate like host resolution (SPEC §8: about 30 s, shorter for
 * misses), so that management requests and `tenant-id` headers do not cost a registry round trip each.
 */
export async function tenantExists(env: Env, settings: Settings, id: string): Promise<boolean> {
  known ??= new HostCache<true>(settings.hostCacheTtlMs, settings.hostCacheNegativeTtlMs);
  const now = currentTime();
  const cached = known.get(id, now);
  if (cached !== undefined) return cached === true;
  const exists = await platform(env).hasTenant(id);
  known.set(id, exists ? true : null, now);
  return exists;
}

let deployments: HostCache<"wfp" | "shared"> | undefined;

/**
 * Whether a tenant runs in its own deployment (`wfp`) or in this shared service, read from the registry and
 * cached like host lookups (issue 28 point 7: a request addressed to a wfp tenant here would reach an empty
 * stand-in). Null for an unknown tenant.
 */
export async function tenantDeployment(env: Env, settings: Settings, id: string): Promise<"wfp" | "shared" | null> {
  deployments ??= new HostCache<"wfp" | "shared">(settings.hostCacheTtlMs, settings.hostCacheNegativeTtlMs);
  const now = currentTime();
  const cached = deployments.get(id, now);
  if (cached !== undefined) return cached;
  const tenant = await platform(env).tenants().get(id);
  const kind = tenant ? (tenant.deployment_type === "wfp" ? "wfp" : "shared") : null;
  deployments.set(id, kind, now);
  return kind;
}

/** The registry as the tenant resolver sees it. */
export function directory(env: Env, settings: Settings): TenantDirectory {
  // The stub only when a lookup misses the host cache (most requests never need it).
  let stub: ReturnType<typeof platform> | undefined;
  const registry = () => (stub ??= platform(env));
  return {
    hasTenant: (id) => tenantExists(env, settings, id),
    resolveCustomDomain: (host) => registry().resolveCustomDomain(host),
    countTenants: () => registry().countTenants(),
    organizationTenant: async (name) => {
      const org = await tenantObject(env, settings.controlPlaneTenantId).organizations().getByName(name);
      const id = org?.metadata?.tenant_id;
      return typeof id === "string" && id ? id : null;
    },
  };
}
