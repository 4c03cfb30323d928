import { RpcTarget } from "cloudflare:workers";
import { ok, type Result } from "../../../shared/errors";
import type { AuditContext, AuditEvent, FailedEvent, ListPage, LogRecord } from "../../../shared/types";
import type { HookRecord } from "../../../shared/schemas/hooks";
import type { Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { bumpConfigVersion, getSetting, INHERITS_FROM, putSetting } from "../core/settings";
import { audited, emitAudit, type WriteTx } from "../core/events";
import * as hooks from "./hooks";
import * as logs from "../core/logs";
import { listFailedEvents, replayFailedEvents } from "../core/outbox";
import type { Publisher } from "../core/publisher";

/**
 * RPC facades of the outbox's resources (STYLE.md "Durable Objects"): `stub.hooks().create(x)` is one round
 * trip by promise pipelining. Every write goes through `Publisher.commit`, so it carries its audit event.
 */
abstract class OutboxRpc extends RpcTarget {
  constructor(
    protected readonly publisher: Publisher,
    protected readonly sql: Sql,
  ) {
    super();
  }
}

/**
 * Hooks are configuration (the snapshot lists triggers with enabled hooks): a successful write bumps the
 * configuration version in its transaction, like `TenantRpc.commit(fn, { config: true })`.
 */
function configured<T>(tx: WriteTx, result: Result<T>): Result<T> {
  if (result.ok) bumpConfigVersion(tx.sql);
  return result;
}

/** Webhook hooks (SPEC §6.1). */
export class HooksRpc extends OutboxRpc {
  list(filter: { trigger_id?: string; enabled?: boolean }): HookRecord[] {
    return hooks.listHooks(this.sql, filter);
  }

  get(id: string): HookRecord | null {
    return hooks.getHook(this.sql, id);
  }

  /** The enabled hooks of a blocking trigger, for the prepare phase. */
  enabled(triggerId: string): HookRecord[] {
    return hooks.enabledHooks(this.sql, triggerId);
  }

  /**
   * Records the tenant whose webhooks this tenant's relay also calls (control-plane inheritance, issue 15
   * point 2): the worker resolves the parent (host options live there) and keeps this link in step; only
   * the link is stored, never the parent's hooks. A no-op when unchanged.
   */
  linkParent(parentTenantId: string | null, audit: AuditContext): void {
    if (getSetting<string | null>(this.sql, INHERITS_FROM, null) === parentTenantId) return;
    this.publisher.commit((tx) => {
      const before = getSetting<string | null>(tx.sql, INHERITS_FROM, null);
      putSetting(tx.sql, INHERITS_FROM, parentTenantId);
      audited(tx, audit, ok({ inherits_from: parentTenantId }), {
        entity: "tenant_inheritance",
        action: "updated",
        id: "inherits_from",
        before: { inherits_from: before },
        after: (x) => x,
      });
    });
  }

  create(hook: hooks.NewHook, audit: AuditContext): Result<HookRecord> {
    return this.publisher.commit((tx) =>
      configured(tx, audited(tx, audit, hooks.createHook(tx.sql, hook, tx.now), { entity: "hook", action: "created", id: hook.id, after: (h) => h })),
    );
  }

  update(id: string, patch: hooks.HookPatch, audit: AuditContext): Result<HookRecord> {
    return this.publisher.commit((tx) => {
      const result = hooks.updateHook(tx.sql, id, patch, tx.now);
      const before = result.ok ? result.value.before : undefined;
      const after = result.ok ? ok(result.value.after) : result;
      return configured(tx, audited(tx, audit, after, { entity: "hook", action: "updated", id, before, after: (h) => h }));
    });
  }

  delete(id: string, audit: AuditContext): Result<HookRecord> {
    return this.publisher.commit((tx) => {
      const result = hooks.deleteHook(tx.sql, id);
      return configured(tx, audited(tx, audit, result, { entity: "hook", action: "deleted", id, before: result.ok ? result.value : undefined }));
    });
  }
}

/** Audit log rows (GET /api/v2/logs). */
export class LogsRpc extends OutboxRpc {
  list(filter: logs.LogFilter, window: logs.LogWindow): ListPage<LogRecord> {
    return logs.listLogs(this.sql, filter, window);
  }

  get(id: string): LogRecord | null {
    return logs.getLog(this.sql, id);
  }

  /** GET /stats/daily: per UTC day in [from, to) (epoch ms). */
  daily(from: number, to: number): logs.DailyStat[] {
    return logs.dailyStats(this.sql, from, to);
  }

  /** GET /stats/active-users: distinct users who logged in since `since` (epoch ms). */
  activeUsers(since: number): number {
    return logs.activeUsers(this.sql, since);
  }

  /** An audit event recorded by another object (the registry): one log row, a redelivery is ignored. */
  append(logId: string, event: AuditEvent): void {
    this.publisher.commit((tx) => logs.writeLog(tx.sql, logId, event, tx.now));
  }
}

/** Dead-lettered outbox events (SPEC §4.2 failed events). */
export class FailedEventsRpc extends OutboxRpc {
  list(offset: number, limit: number): { items: FailedEvent[]; total: number } {
    return listFailedEvents(this.sql, offset, limit);
  }

  /** Replays dead-lettered events (SPEC §3.2) and re-arms the alarm for them. */
  replay(ids: string[], audit: AuditContext): { replayed: string[]; not_found: string[] } {
    const result = this.publisher.commit((tx) => {
      const outcome = replayFailedEvents(tx.sql, ids, tx.now);
      const description = `Replayed ${outcome.replayed.length} failed event(s)`;
      emitAudit(tx, audit, { event_type: "failed_event.replayed", log_type: LOG_TYPES.api, category: "admin_action", description, target: { type: "failed_event", id: null, after: outcome } });
      return outcome;
    });
    this.publisher.schedule();
    return result;
  }
}
