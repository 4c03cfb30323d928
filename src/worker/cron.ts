import { renewExpiringKeys } from "./tenant/key-renewal";
import { platform, tenantObject } from "./tenant/stubs";

const PAGE = 100;

/**
 * Cron safety net (SPEC §6.3 scheduled jobs): each tenant object's own alarm does the relay, retries and
 * retention; the cron only asks every tenant object to re-arm that alarm at its earliest due job, in case an
 * alarm was lost (a crash between commit and `setAlarm`, or an alarm dropped after its retries).
 */
export async function pokeOutboxes(env: Env): Promise<{ poked: number; due: number }> {
  const ids = await tenantIds(env);
  // The registry relays its own events (tenant writes) the same way.
  await platform(env).pokeOutbox();
  let due = 0;
  for (const id of ids) {
    if ((await tenantObject(env, id).pokeOutbox()) !== null) due++;
  }
  return { poked: ids.size, due };
}

/** Every registered tenant, the control plane first. */
async function tenantIds(env: Env): Promise<Set<string>> {
  const ids = new Set<string>([env.CONTROL_PLANE_TENANT_ID || "control_plane"]);
  const registry = platform(env);
  for (let offset = 0; ; offset += PAGE) {
    const { items } = await registry.tenants().list({ offset, limit: PAGE });
    for (const tenant of items) ids.add(tenant.id);
    if (items.length < PAGE) break;
  }
  return ids;
}

/**
 * Hourly: renews the certificates of signing keys that sign and expire within 30 days (key-renewal.ts), so
 * no tenant ever runs out of valid keys. One tenant's failure does not stop the others; the next hour retries.
 */
export async function renewSigningKeys(env: Env): Promise<{ renewed: number }> {
  let renewed = 0;
  for (const id of await tenantIds(env)) {
    try {
      renewed += (await renewExpiringKeys(env, id)).length;
    } catch (error) {
      console.warn(`tenant ${id}: signing-key renewal failed, retried next hour`, error);
    }
  }
  return { renewed };
}
