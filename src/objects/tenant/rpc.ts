import { RpcTarget } from "cloudflare:workers";
import type { Sql } from "../sql";
import { bumpConfigVersion } from "./config";
import { type OutboxEventInput, recordOutboxEvents } from "./outbox";

/** What the facades share with the object: its SQL, its storage, the clock and the post-commit hook. */
export interface TenantCore {
  readonly sql: Sql;
  readonly storage: DurableObjectStorage;
  /** Epoch milliseconds from the injected clock (src/shared/clock.ts). */
  now(): number;
  /** Runs after every committed write: reschedules the alarm (issue 8; a no-op until then). */
  afterCommit(): void;
}

/** What a write sees inside its transaction. */
export interface WriteTx {
  sql: Sql;
  now: number;
  /** Queues an outbox event, stored in the same transaction (src/objects/tenant/outbox.ts). */
  emit(event: OutboxEventInput): void;
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
  constructor(protected readonly core: TenantCore) {
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
    const { sql, storage } = this.core;
    const now = this.core.now();
    const result = storage.transactionSync(() => {
      const events: OutboxEventInput[] = [];
      const out = fn({ sql, now, emit: (event) => events.push(event) });
      if (opts.config && !failed(out)) bumpConfigVersion(sql);
      if (events.length) recordOutboxEvents(sql, events, now);
      return out;
    });
    this.core.afterCommit();
    return result;
  }
}
