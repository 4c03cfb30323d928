import { RpcTarget } from "cloudflare:workers";
import type { AuditContext } from "../../../shared/types";
import type { Sql } from "../../sql";
import { SYSTEM_CONTEXT } from "./audit";
import { bumpConfigVersion } from "./settings";
import type { WriteTx } from "./events";

export type { WriteTx } from "./events";

/** What the facades share with the object: its SQL, its storage, the clock and the post-commit hook. */
export interface TenantCore {
  readonly sql: Sql;
  readonly storage: DurableObjectStorage;
  /** Epoch milliseconds from the injected clock (src/shared/clock.ts). */
  now(): number;
  /** Makes sure the alarm fires no later than now (new outbox events are due). */
  afterCommit(): void;
  /**
   * The outbox's write path (`Publisher.commit`): `fn` and the events it emits in one `transactionSync`,
   * then the alarm rescheduled when events were stored.
   */
  commit<T>(fn: (tx: WriteTx) => T): T;
}

/** A domain failure (`{ ok: false }`) rolls back nothing but is not a configuration change either. */
const failed = (value: unknown) =>
  typeof value === "object" && value !== null && (value as { ok?: unknown }).ok === false;

/**
 * Base of every TenantObject facade (STYLE.md, "Durable Objects"): the one place that reads and the one
 * place that commits, so no write can skip the transaction, the configuration version, its outbox rows or
 * the alarm.
 */
export abstract class TenantRpc extends RpcTarget {
  constructor(
    protected readonly core: TenantCore,
    /** Who acts: the caller's audit context (actor, request), recorded with every event a write emits. */
    protected readonly audit: AuditContext = SYSTEM_CONTEXT,
  ) {
    super();
  }

  /** A read: no transaction needed (a single statement or a consistent synchronous sequence). */
  protected read<T>(fn: (sql: Sql, now: number) => T): T {
    return fn(this.core.sql, this.core.now());
  }

  /**
   * A write, in one `transactionSync`: with `config`, bumps the configuration version unless the write
   * answered a domain failure; stores the events emitted; then runs `core.afterCommit()` (the alarm).
   */
  protected commit<T>(fn: (tx: WriteTx) => T, opts: { config?: boolean } = {}): T {
    return this.core.commit((tx) => {
      const out = fn(tx);
      if (opts.config && !failed(out)) bumpConfigVersion(tx.sql);
      return out;
    });
  }
}
