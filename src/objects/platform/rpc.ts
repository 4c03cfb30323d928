import { RpcTarget } from "cloudflare:workers";
import type { AuditContext } from "../../shared/types";
import type { Result } from "../../shared/errors";
import type { Sql } from "../sql";
import { SYSTEM_CONTEXT } from "../tenant/core/audit";
import { audited, type ManagementWrite, type WriteTx } from "../tenant/core/events";

/** What the registry's facades share with the object. */
export interface PlatformCore {
  readonly sql: Sql;
  readonly storage: DurableObjectStorage;
  now(): number;
  /** The registry outbox's write path (`Publisher.commit`): the write and its events in one transaction. */
  commit<T>(fn: (tx: WriteTx) => T): T;
}

/** Base of the PlatformObject facades: the one place that reads and the one place that commits. */
export abstract class PlatformRpc extends RpcTarget {
  constructor(
    protected readonly core: PlatformCore,
    /** Who acts (recorded with the events a write emits). */
    protected readonly audit: AuditContext = SYSTEM_CONTEXT,
    /** The tenant whose logs receive the registry's audit events (null: not logged). */
    protected readonly logTenantId: string | null = null,
  ) {
    super();
  }

  protected read<T>(fn: (sql: Sql, now: number) => T): T {
    return fn(this.core.sql, this.core.now());
  }

  /** A write, in one `transactionSync`. */
  protected commit<T>(fn: (sql: Sql, now: number) => T): T {
    return this.core.commit((tx) => fn(tx.sql, tx.now));
  }

  /** A write and the events it emits, in one transaction through the registry's outbox. */
  protected commitTx<T>(fn: (tx: WriteTx) => T): T {
    return this.core.commit(fn);
  }

  /**
   * A registry write with its audit event (`tenant.*`, `custom_domain.*`, `tenant_operation.*`,
   * `proxy_route.*`), logged in the acting tenant's logs (an internal destination: the network lane, since
   * it is RPC to another object). Without a log tenant, no event.
   */
  protected auditedWrite<T>(fn: (tx: WriteTx) => Result<T>, write: ManagementWrite<T>): Result<T> {
    const { audit, logTenantId } = this;
    return this.commitTx((tx) => {
      if (!logTenantId) return fn(tx);
      const routed: WriteTx = {
        ...tx,
        emit: (event) => tx.emit({ ...event, lane: "network", payload: { ...event.payload, log_tenant_id: logTenantId } as typeof event.payload }),
      };
      return audited(routed, audit, fn(tx), write);
    });
  }
}
