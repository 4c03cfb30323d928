import type { AuditEvent } from "../../shared/types";
import type { Destination } from "../tenant/core/relay";

/**
 * The registry's one destination (an internal destination, ARCHITECTURE.md §3): its audit events (tenant
 * created, updated, deleted) become log rows of the tenant named by `log_tenant_id` (the acting token's
 * tenant), through that tenant object's idempotent `logs().append`. RPC to another object is I/O, so these
 * events travel the network lane, claimed with a lease and delivered outside any transaction.
 */
export function tenantLogsDestination(env: Env): Destination {
  return {
    name: "tenant_logs",
    lane: "network",
    timeoutMs: 10_000,
    accepts: (type) => !type.startsWith("hook."),
    async deliver(event) {
      const audit = event.payload as unknown as AuditEvent;
      if (!audit.log_tenant_id) return;
      await env.TENANT.getByName(audit.log_tenant_id).logs().append(event.id, audit);
    },
  };
}
