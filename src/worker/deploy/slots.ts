import { otherSlot } from "../../shared/script-name";
import type { Json } from "../../shared/types";
import type { ReleaseManifest } from "./namespace";
import { copyIssuer, type DeployTarget, deployToken, GENERATED_SECRETS, keptSecrets, type StepDeps, scriptUploadFor } from "./provisioner";

/**
 * Two-slot upgrades of a wfp tenant (issue 16 point 6: "only then routes traffic to the new release").
 *
 * A copy has two script names, `<base>` and `<base>--b`; the tenant row's `worker_script_name` is the live one
 * and the dispatcher routes to it. An upgrade:
 *
 * 1. stage-script: uploads the new release under the other slot, started on a snapshot of the live slot's
 *    storage (the namespace's `storageFrom`), so nothing it does can touch the live data;
 * 2. stage-secrets: gives it the copy's own secrets (kept sealed by the control plane, platform migration 0006;
 *    a namespace never reads a secret back);
 * 3. apply-migrations and 4. verify, against the staged slot only: its pending schema migrations apply to (a
 *    snapshot of) the tenant's data, it answers as the new release with the release's schema, and its
 *    discovery names the tenant's issuer. Meanwhile the live slot keeps serving on the old release.
 * 5. switch: the namespace hands the live data to the new release (`promoteScript`) and the new code applies
 *    the same migrations to it; the workflow's publish step then moves the pin and `worker_script_name` in one
 *    commit, which is the route the dispatcher reads.
 *
 * A failure before the switch tears the staged slot down (`teardown`); the tenant's pin, route and running code
 * never changed.
 */
export { otherSlot };

export const SLOT_STEPS = ["stage-script", "stage-secrets", "apply-migrations", "verify", "switch"] as const;
export type SlotStep = (typeof SLOT_STEPS)[number];

/** What an upgrade run knows: the live script, the staged one. */
export interface SlotPlan {
  live: string;
  staged: string;
}

function checkSchema(release: ReleaseManifest, schema: { tenant?: string | null } | undefined, where: string): void {
  if (release.schema.tenant && schema?.tenant !== release.schema.tenant) {
    throw new Error(`${where}: tenant schema is ${schema?.tenant ?? "none"}, release ${release.worker_version} expects ${release.schema.tenant}`);
  }
}

async function callScript(deps: StepDeps, target: DeployTarget, script: string, method: string, path: string): Promise<{ [key: string]: Json }> {
  const url = new URL(path, copyIssuer(deps.env, target.tenant.id));
  const res = await deps.namespace.fetchScript(
    script,
    new Request(url, { method, headers: { authorization: `Bearer ${await deployToken(deps.env, target.tenant.id)}`, "content-type": "application/json" } }),
  );
  if (!res) throw new Error(`script ${script} is not in the namespace`);
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} on ${script}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as { [key: string]: Json };
}

/** One step of a two-slot upgrade; each is idempotent (a retry or a resumed run repeats it safely). */
export async function runSlotStep(name: SlotStep, deps: StepDeps, target: DeployTarget, slots: SlotPlan): Promise<{ [key: string]: Json }> {
  const { namespace } = deps;
  const release = await deps.releases.manifest(target.bundle_configuration, target.worker_version);
  switch (name) {
    case "stage-script": {
      // Always a fresh upload: the staged slot serves nobody, and a new snapshot is the most recent data.
      await namespace.uploadScript({ ...(await scriptUploadFor(deps, target, release, slots.staged)), storageFrom: slots.live });
      return { script_name: slots.staged, live: slots.live, sha256: release.sha256 };
    }
    case "stage-secrets": {
      const kept = await keptSecrets(deps.env, target.tenant.id);
      const missing = GENERATED_SECRETS.filter((n) => kept[n] === undefined);
      if (missing.length > 0) throw new Error(`the control plane does not hold ${missing.join(", ")} of this copy`);
      for (const n of GENERATED_SECRETS) await namespace.putSecret(slots.staged, n, kept[n] as string);
      await namespace.putSecret(slots.staged, "DEPLOY_TOKEN", await deployToken(deps.env, target.tenant.id));
      return { script_name: slots.staged, secrets: [...GENERATED_SECRETS, "DEPLOY_TOKEN"] };
    }
    case "apply-migrations": {
      const out = await callScript(deps, target, slots.staged, "POST", "/__gatehouse/deploy/migrate");
      checkSchema(release, out.schema as { tenant?: string | null }, slots.staged);
      return { script_name: slots.staged, schema: out.schema ?? null };
    }
    case "verify": {
      const health = await callScript(deps, target, slots.staged, "GET", "/__gatehouse/deploy/health");
      if (health.worker_version !== target.worker_version) {
        throw new Error(`the staged copy answers as ${String(health.worker_version)}, expected ${target.worker_version}`);
      }
      checkSchema(release, health.schema as { tenant?: string | null }, slots.staged);
      const issuer = copyIssuer(deps.env, target.tenant.id);
      const res = await namespace.fetchScript(slots.staged, new Request(new URL("/.well-known/openid-configuration", issuer)));
      const discovery = res?.ok ? ((await res.json()) as { issuer?: string }) : null;
      if (discovery?.issuer !== issuer) throw new Error(`discovery on ${slots.staged} answered ${res?.status ?? "no script"} issuer ${discovery?.issuer}`);
      return { script_name: slots.staged, worker_version: target.worker_version, schema: health.schema ?? null, issuer };
    }
    case "switch": {
      const serving = await namespace.promoteScript(slots.staged, await scriptUploadFor(deps, target, release, slots.live));
      // The live data under the new code: the migrations verified on the snapshot apply to it now.
      const out = await callScript(deps, target, serving, "POST", "/__gatehouse/deploy/migrate");
      checkSchema(release, out.schema as { tenant?: string | null }, serving);
      if (out.worker_version !== target.worker_version) throw new Error(`${serving} answers as ${String(out.worker_version)} after the switch`);
      return { script_name: serving, previous: slots.live, schema: out.schema ?? null };
    }
  }
}

/** Removes the staged slot after a failed upgrade (absent is fine). */
export async function teardownStaged(deps: StepDeps, slots: SlotPlan): Promise<{ [key: string]: Json }> {
  const existing = await deps.namespace.getScript(slots.staged);
  if (existing) await deps.namespace.deleteScript(slots.staged);
  return { script_name: slots.staged, removed: existing !== null };
}
