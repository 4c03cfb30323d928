import { encryptionContext } from "../../shared/crypto/contexts";
import { toBase64Url, utf8 } from "../../shared/crypto/encoding";
import { fieldCipher } from "../../shared/crypto/encryption";
import { randomToken } from "../../shared/crypto/random";
import type { Json, Tenant } from "../../shared/types";
import { settingsOf } from "../settings";
import { platform, tenantObject } from "../tenant/stubs";
import type { ReleaseManifest, ScriptUpload, TenantNamespace } from "./namespace";
import type { ReleaseStore } from "./releases";

/**
 * The provisioning steps of a per-tenant deployment (issue 16 point 4; SPEC §3.1, "Provisioning hook entry
 * points"). Each step is idempotent: it looks before it writes, so a retry, a replay after a crash, or a
 * redeploy of a failed tenant repeats it without harm. The durable executor (workflow.ts) runs them in
 * order, retried with backoff and journaled in `tenant_operation_events`.
 *
 * Order: create-database, upload-script, upload-secrets, apply-migrations, seed-defaults, verify. The
 * reference provisioner applies migrations before the upload because its storage is an external SQL
 * database reached through its HTTP query endpoint; here a copy's storage is its own Durable Objects, whose
 * migrations can only run inside the uploaded code, so apply-migrations follows upload-script (docs/deployments.md,
 * "Provisioning").
 */
export const STEPS = ["create-database", "upload-script", "upload-secrets", "apply-migrations", "seed-defaults", "verify"] as const;
export type StepName = (typeof STEPS)[number];

/** What an operation deploys: the tenant, its target release and script. */
export interface DeployTarget {
  tenant: Tenant;
  worker_version: string;
  bundle_configuration: string;
  script_name: string;
}

export interface StepDeps {
  env: Env;
  namespace: TenantNamespace;
  releases: ReleaseStore;
  fetch?: typeof fetch;
}

/** The secrets every copy gets; generated once per tenant and never overwritten (data is encrypted with them). */
export const GENERATED_SECRETS = ["ENCRYPTION_KEY", "CONTROL_PLANE_CLIENT_SECRET"] as const;
export type GeneratedSecret = (typeof GENERATED_SECRETS)[number];

/**
 * The copy's generated secrets the control plane kept (sealed in the registry under its own ENCRYPTION_KEY,
 * platform migration 0006), decrypted; a copy provisioned before they were kept has none.
 */
export async function keptSecrets(env: Env, tenantId: string): Promise<Partial<Record<GeneratedSecret, string>>> {
  const sealed = await platform(env).deploySecrets().sealed(tenantId);
  const cipher = await fieldCipher(env.ENCRYPTION_KEY);
  const out: Partial<Record<GeneratedSecret, string>> = {};
  for (const name of GENERATED_SECRETS) {
    const stored = sealed[name];
    if (stored) out[name] = await cipher.decrypt(stored, encryptionContext.deploySecret(tenantId, name));
  }
  return out;
}

/** Generates a secret and keeps it sealed before any script sees it; a racing or retried call gets the first value. */
async function generateSecret(env: Env, tenantId: string, name: GeneratedSecret): Promise<string> {
  const cipher = await fieldCipher(env.ENCRYPTION_KEY);
  const context = encryptionContext.deploySecret(tenantId, name);
  const kept = await platform(env).deploySecrets().keep(tenantId, name, await cipher.encrypt(randomToken(32), context));
  return cipher.decrypt(kept, context);
}

/**
 * The copy's deployment token: HMAC of the tenant id under this deployment's ENCRYPTION_KEY. The platform can
 * always recompute it; the copy learns only the MAC, never the dispatcher's key (a copy inherits no secret).
 */
export async function deployToken(env: Env, tenantId: string): Promise<string> {
  const secret = env.ENCRYPTION_KEY;
  if (!secret) throw new Error("ENCRYPTION_KEY is not set: cannot derive tenant deployment tokens");
  const key = await crypto.subtle.importKey("raw", utf8(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, utf8(`gatehouse-deploy-token:${tenantId}`));
  return toBase64Url(new Uint8Array(mac));
}

/** The copy's issuer: the tenant's platform subdomain, under this deployment's issuer scheme. */
export function copyIssuer(env: Env, tenantId: string): string {
  const settings = settingsOf(env);
  return `${settings.issuerProtocol}//${tenantId}.${settings.apexHost}/`;
}

/** The variables (not secrets) a copy runs with. */
export function copyVars(env: Env, target: DeployTarget): Record<string, string> {
  const settings = settingsOf(env);
  return {
    ISSUER: copyIssuer(env, target.tenant.id),
    CONTROL_PLANE_TENANT_ID: target.tenant.id,
    CONTROL_PLANE_CLIENT_ID: settings.controlPlaneClientId,
    CONTROL_PLANE_URL: settings.issuer,
    WORKER_VERSION: target.worker_version,
    BUNDLE_CONFIGURATION: target.bundle_configuration,
    HOST_CACHE_TTL_MS: String(settings.hostCacheTtlMs),
    HOST_CACHE_NEGATIVE_TTL_MS: String(settings.hostCacheNegativeTtlMs),
    ...(settings.devMessageSink ? { DEV_MESSAGE_SINK: "1" } : {}),
  };
}

async function callCopy(deps: StepDeps, target: DeployTarget, method: string, path: string, script = target.script_name): Promise<{ [key: string]: Json }> {
  const token = await deployToken(deps.env, target.tenant.id);
  const url = new URL(path, copyIssuer(deps.env, target.tenant.id));
  const res = await deps.namespace.fetchScript(
    script,
    new Request(url, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } }),
  );
  if (!res) throw new Error(`script ${script} is not in the namespace`);
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} on ${script}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as { [key: string]: Json };
}

/** Each step: returns a small, serializable summary (the journal's `detail`, the workflow's step output). */
export async function runStep(name: StepName, deps: StepDeps, target: DeployTarget): Promise<{ [key: string]: Json }> {
  const { namespace } = deps;
  switch (name) {
    case "create-database": {
      if (target.tenant.storage_kind === "own_d1") {
        const id = await namespace.ensureDatabase(`gatehouse-${target.tenant.id}`);
        return { storage_kind: "own_d1", d1_database_id: id };
      }
      return { storage_kind: target.tenant.storage_kind, d1_database_id: target.tenant.d1_database_id, created: false };
    }
    case "upload-script": {
      const release = await deps.releases.manifest(target.bundle_configuration, target.worker_version);
      const existing = await namespace.getScript(target.script_name);
      if (existing && hasTags(existing.tags, release)) return { script_name: target.script_name, uploaded: false, sha256: release.sha256 };
      await namespace.uploadScript(await scriptUploadFor(deps, target, release, target.script_name));
      return { script_name: target.script_name, uploaded: true, sha256: release.sha256 };
    }
    case "upload-secrets": {
      const present = new Set(await namespace.listSecrets(target.script_name));
      const kept = await keptSecrets(deps.env, target.tenant.id);
      const generated: string[] = [];
      const restored: string[] = [];
      for (const name of GENERATED_SECRETS) {
        const value = kept[name];
        if (value !== undefined) {
          if (present.has(name)) continue;
          // Kept but not on the script (a crash between keeping and putting): the kept value is the one.
          await namespace.putSecret(target.script_name, name, value);
          restored.push(name);
        } else if (!present.has(name)) {
          await namespace.putSecret(target.script_name, name, await generateSecret(deps.env, target.tenant.id, name));
          generated.push(name);
        }
        // Present but never kept: a copy provisioned before secrets were kept; its value stays as it is.
      }
      // Derived, so putting it again writes the same value.
      await namespace.putSecret(target.script_name, "DEPLOY_TOKEN", await deployToken(deps.env, target.tenant.id));
      return { generated, restored, kept: GENERATED_SECRETS.filter((n) => kept[n] !== undefined && !generated.includes(n)) };
    }
    case "apply-migrations": {
      const release = await deps.releases.manifest(target.bundle_configuration, target.worker_version);
      const out = await callCopy(deps, target, "POST", "/__gatehouse/deploy/migrate");
      const schema = out.schema as { tenant: string | null; platform: string | null };
      if (release.schema.tenant && schema.tenant !== release.schema.tenant) {
        throw new Error(`tenant schema is ${schema.tenant}, release ${release.worker_version} expects ${release.schema.tenant}`);
      }
      return { schema };
    }
    case "seed-defaults": {
      const out = await callCopy(deps, target, "POST", "/__gatehouse/deploy/seed");
      // A re-provisioned copy learns the custom domains the control plane holds for it.
      const domains = await pushCustomDomains(deps, target.tenant, target.script_name);
      return { seeded: out.seeded === true, signing_keys: out.signing_keys ?? null, custom_domains: domains };
    }
    case "verify": {
      const health = await callCopy(deps, target, "GET", "/__gatehouse/deploy/health");
      if (health.worker_version !== target.worker_version) {
        throw new Error(`the copy answers as ${String(health.worker_version)}, expected ${target.worker_version}`);
      }
      const issuer = copyIssuer(deps.env, target.tenant.id);
      const res = await deps.namespace.fetchScript(target.script_name, new Request(new URL("/.well-known/openid-configuration", issuer)));
      const discovery = res?.ok ? ((await res.json()) as { issuer?: string }) : null;
      if (discovery?.issuer !== issuer) throw new Error(`discovery on ${target.script_name} answered ${res?.status ?? "no script"} issuer ${discovery?.issuer}`);
      return { worker_version: health.worker_version, issuer };
    }
  }
}

/** The upload of a release as `scriptName` with the copy's bindings. */
export async function scriptUploadFor(deps: StepDeps, target: DeployTarget, release: ReleaseManifest, scriptName: string): Promise<ScriptUpload> {
  return {
    scriptName,
    release,
    files: await deps.releases.files(release),
    vars: copyVars(deps.env, target),
    databaseId: target.tenant.d1_database_id,
    compatibilityDate: release.compatibility_date ?? "2026-08-01",
    compatibilityFlags: release.compatibility_flags ?? ["nodejs_compat"],
    durableObjectClasses: [
      { binding: "PLATFORM", className: "PlatformObject" },
      { binding: "TENANT", className: "TenantObject" },
      { binding: "USER", className: "UserObject" },
      { binding: "CODES", className: "CodeObject" },
    ],
  };
}

/**
 * Mirrors the tenant's custom domains (the control plane's registry is the record) into its copy, so the copy
 * resolves a domain the dispatcher routes to it and names it as issuer. Returns the domains pushed.
 */
export async function pushCustomDomains(deps: Pick<StepDeps, "env" | "namespace">, tenant: Tenant, scriptName = tenant.worker_script_name): Promise<string[]> {
  const domains = await platform(deps.env).domains().list(tenant.id);
  const res = await deps.namespace.fetchScript(
    scriptName,
    new Request(new URL("/__gatehouse/deploy/custom-domains", copyIssuer(deps.env, tenant.id)), {
      method: "PUT",
      headers: { authorization: `Bearer ${await deployToken(deps.env, tenant.id)}`, "content-type": "application/json" },
      body: JSON.stringify({ domains }),
    }),
  );
  if (!res) throw new Error(`script ${scriptName} is not in the namespace`);
  if (!res.ok) throw new Error(`PUT custom-domains on ${scriptName}: ${res.status} ${(await res.text()).slice(0, 200)}`);
  return domains.map((d) => d.domain);
}

function hasTags(tags: string[], release: ReleaseManifest): boolean {
  return tags.includes(`worker_version:${release.worker_version}`) && tags.includes(`bundle_configuration:${release.bundle_configuration}`);
}

/**
 * The steps of a shared tenant's upgrade (issue 16 point 6): its code is the shared worker's, so only its
 * object's schema moves. apply-migrations applies the pending migrations of this code (recorded in the
 * object's `schema_upgrades`); verify checks that none is left.
 */
export const SHARED_STEPS = ["apply-migrations", "verify"] as const;

export async function runSharedStep(
  name: (typeof SHARED_STEPS)[number],
  env: Env,
  tenantId: string,
  operationId: string,
): Promise<{ [key: string]: Json }> {
  const object = tenantObject(env, tenantId);
  if (name === "apply-migrations") {
    const { from, to, applied } = await object.upgradeSchema(operationId);
    return { from, to, applied };
  }
  const pending = await object.pendingMigrations();
  if (pending.length > 0) throw new Error(`tenant schema still has pending migrations: ${pending.join(", ")}`);
  return { schema: await object.schemaVersion() };
}
