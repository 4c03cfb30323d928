import { RpcTarget } from "cloudflare:workers";
import type { Sql } from "../sql";

/** What the registry's facades share with the object. */
export interface PlatformCore {
  readonly sql: Sql;
  readonly storage: DurableObjectStorage;
  now(): number;
}

/** Base of the PlatformObject facades: the one place that reads and the one place that commits. */
export abstract class PlatformRpc extends RpcTarget {
  constructor(protected readonly core: PlatformCore) {
    super();
  }

  protected read<T>(fn: (sql: Sql, now: number) => T): T {
    return fn(this.core.sql, this.core.now());
  }

  /** A write, in one `transactionSync`. */
  protected commit<T>(fn: (sql: Sql, now: number) => T): T {
    return this.core.storage.transactionSync(() => fn(this.core.sql, this.core.now()));
  }
}
