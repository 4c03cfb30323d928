import { encryptionContext } from "../../shared/crypto/contexts";
import { fieldCipher } from "../../shared/crypto/encryption";
import { hashPassword } from "../../shared/crypto/passwords";
import { CONSOLE_CLIENT_ID, consoleCallback, consoleLoggedOut } from "../../shared/console";
import { CURRENT_USER_SCOPES, MANAGEMENT_AUDIENCE, MANAGEMENT_SCOPES } from "../../shared/scopes";
import { consoleClientSecret } from "../admin/credentials";
import { requestControlPlaneSync } from "./control-plane-sync";
import type { TenantConfig, TenantSeed } from "../../shared/types";
import type { Settings } from "../settings";
import { clientIn, invalidateTenantConfig } from "./config-cache";
import { now } from "../../shared/clock";
import { signingKeyAt } from "../../shared/key-ring";
import { generateSigningKey } from "./signing";
import { platform, tenantObject } from "./stubs";


/**
 * Prepares a tenant seed in the worker (key generation, encryption and hashing are CPU work that must not
 * run inside an object). A key is generated only when the tenant has none.
 */
export async function prepareSeed(
  env: Env,
  tenantId: string,
  existing: TenantConfig | null,
  extra: Pick<TenantSeed, "controlPlaneClient" | "admin" | "console"> = {},
): Promise<TenantSeed> {
  const key = existing && signingKeyAt(existing.signingKeys, now());
  const signingKey = key ? null : await generateSigningKey(env.ENCRYPTION_KEY, { commonName: tenantId });
  return {
    tenantId,
    signingKey,
    managementAudience: MANAGEMENT_AUDIENCE,
    managementScopes: [...MANAGEMENT_SCOPES],
    ...extra,
  };
}

/** Runs the idempotent seed of a child tenant (SPEC: "A tenant seed routine is idempotent"). */
export async function seedChildTenant(env: Env, tenantId: string): Promise<void> {
  await tenantObject(env, tenantId).seed(await prepareSeed(env, tenantId, null));
  invalidateTenantConfig(tenantId);
}

let isBootstrapped = false;

/**
 * Seeds the control-plane tenant on first use of an empty store (issue #2 point 4); after one success the
 * isolate skips it. On later isolate starts it only re-checks that the control-plane client's secret matches
 * `CONTROL_PLANE_CLIENT_SECRET` (the environment is the source of truth for it). Requests arriving together
 * on a cold isolate each run it (every step is idempotent) rather than await another request's I/O, which
 * workerd forbids.
 */
export async function ensureControlPlane(env: Env, settings: Settings): Promise<void> {
  if (isBootstrapped) return;
  await runBootstrap(env, settings);
  isBootstrapped = true;
}

/** Test hook: forget that this isolate bootstrapped. */
export function resetBootstrap(): void {
  isBootstrapped = false;
}

async function runBootstrap(env: Env, settings: Settings): Promise<void> {
  const id = settings.controlPlaneTenantId;
  const registry = platform(env);
  const { seeded } = await registry.tenants().ensure({ id, name: "Control plane" });
  const tenant = tenantObject(env, id);
  const existing = seeded ? await tenant.getConfig(id) : null;
  if (
    seeded &&
    existing &&
    managementApiInStep(existing) &&
    (await controlPlaneClientInStep(env, settings, existing)) &&
    (await consoleClientInStep(env, settings, existing))
  ) {
    return;
  }
  const cipher = await fieldCipher(env.ENCRYPTION_KEY);
  const secret = settings.controlPlaneClientSecret;
  if (!secret) console.warn("CONTROL_PLANE_CLIENT_SECRET is not set: no control-plane client will be seeded");
  const extra: Pick<TenantSeed, "controlPlaneClient" | "admin" | "console"> = {};
  if (secret) {
    extra.controlPlaneClient = {
      client_id: settings.controlPlaneClientId,
      name: "Gatehouse control plane",
      client_secret_enc: await cipher.encrypt(secret, encryptionContext.clientSecret(settings.controlPlaneClientId)),
    };
  }
  // The admin console's application and the operator roles (issue 30); ADMIN_EMAIL's user gets the Admin role.
  extra.console = {
    client_id: CONSOLE_CLIENT_ID,
    name: "Gatehouse admin console",
    client_secret_enc: await cipher.encrypt(await consoleClientSecret(env.ENCRYPTION_KEY), encryptionContext.clientSecret(CONSOLE_CLIENT_ID)),
    callbacks: [consoleCallback(settings.issuer)],
    logout_urls: [consoleLoggedOut(settings.issuer)],
    ...(settings.adminEmail ? { adminEmail: settings.adminEmail } : {}),
  };
  if (!seeded && settings.adminEmail && settings.adminPassword) {
    extra.admin = { email: settings.adminEmail, password_hash: await hashPassword(settings.adminPassword) };
  }
  const { created } = await tenant.seed(await prepareSeed(env, id, existing, extra));
  await registry.tenants().markSeeded(id);
  invalidateTenantConfig(id);
  // A release that changed the management scopes: children follow through `sync` (issue 15 point 2).
  if (seeded && created.includes("management_api")) await requestControlPlaneSync(env, settings, id, "resourceServers");
}

/** Whether the control plane's management API defines exactly this release's scopes (else the seed runs again). */
function managementApiInStep(config: TenantConfig): boolean {
  const api = config.resourceServers.find((r) => r.is_system);
  const expected = [...MANAGEMENT_SCOPES, ...CURRENT_USER_SCOPES];
  return !!api && api.scopes.length === expected.length && api.scopes.every((s, i) => s.value === expected[i]);
}

async function controlPlaneClientInStep(env: Env, settings: Settings, config: TenantConfig): Promise<boolean> {
  const client = clientIn(config, settings.controlPlaneClientId);
  if (!settings.controlPlaneClientSecret) return true;
  if (!client?.client_secret_enc) return false;
  const cipher = await fieldCipher(env.ENCRYPTION_KEY);
  try {
    const stored = await cipher.decrypt(client.client_secret_enc, encryptionContext.clientSecret(client.client_id));
    return stored === settings.controlPlaneClientSecret;
  } catch {
    return false;
  }
}

/** Whether the console's application is seeded with this deployment's callback and secret (issue 30). */
async function consoleClientInStep(env: Env, settings: Settings, config: TenantConfig): Promise<boolean> {
  const client = clientIn(config, CONSOLE_CLIENT_ID);
  if (!client?.client_secret_enc || client.callbacks.join(" ") !== consoleCallback(settings.issuer)) return false;
  if (client.allowed_logout_urls.join(" ") !== consoleLoggedOut(settings.issuer)) return false;
  // Deployments seeded before tenant admins could log in through their organization.
  if (client.extra.organization_usage !== "allow") return false;
  const cipher = await fieldCipher(env.ENCRYPTION_KEY);
  try {
    const stored = await cipher.decrypt(client.client_secret_enc, encryptionContext.clientSecret(CONSOLE_CLIENT_ID));
    return stored === (await consoleClientSecret(env.ENCRYPTION_KEY));
  } catch {
    return false;
  }
}
