import { ok } from "../../shared/errors";
import { PlatformRpc } from "./rpc";

/**
 * The secrets each per-tenant copy was provisioned with (platform migration 0006), stored sealed: the worker
 * encrypts under the control plane's ENCRYPTION_KEY (context `tenant_deploy_secret:<tenant>:<name>`) before
 * they reach the registry, and decrypts what it reads; the object only ever holds ciphertext. A value is
 * written once: `keep` never overwrites, so two racing (or retried) generations agree on the first value.
 */
export class DeploySecrets extends PlatformRpc {
  /** Stores the ciphertext unless the tenant already has that secret; returns the ciphertext that is kept. */
  keep(tenantId: string, name: string, ciphertext: string): string {
    return this.commit((sql, now) => {
      sql.run`INSERT OR IGNORE INTO tenant_deploy_secrets (tenant_id, name, ciphertext, created_at)
        VALUES (${tenantId}, ${name}, ${ciphertext}, ${now})`;
      return (sql.first<{ ciphertext: string }>`SELECT ciphertext FROM tenant_deploy_secrets
        WHERE tenant_id = ${tenantId} AND name = ${name}`?.ciphertext ?? ciphertext) as string;
    });
  }

  /** The tenant's sealed secrets by name (empty for a copy provisioned before they were kept). */
  sealed(tenantId: string): Record<string, string> {
    return this.read((sql) =>
      Object.fromEntries(
        sql.all<{ name: string; ciphertext: string }>`SELECT name, ciphertext FROM tenant_deploy_secrets WHERE tenant_id = ${tenantId}`.map((r) => [r.name, r.ciphertext]),
      ),
    );
  }

  /**
   * Records that the control plane issued a management token for the tenant's copy with its kept client secret
   * (`tenant_management_token.created`, in the acting tenant's logs). The secret itself never leaves the worker.
   */
  recordTokenIssued(tenantId: string, detail: { audience: string; scope: string | null; expires_in: number | null }): void {
    this.auditedWrite(() => ok({ tenant_id: tenantId, ...detail }), {
      entity: "tenant_management_token",
      action: "created",
      id: tenantId,
      after: (v) => v,
    });
  }

  /** Forgets a deprovisioned tenant's secrets. */
  forget(tenantId: string): void {
    this.commit((sql) => sql.run`DELETE FROM tenant_deploy_secrets WHERE tenant_id = ${tenantId}`);
  }
}
