import { type EgressPolicy, egressPolicyFrom } from "../../../shared/egress-policy";
import type { AuditEvent, Json } from "../../../shared/types";
import type { HookRecord } from "../../../shared/schemas/hooks";
import { postToHook, WEBHOOK_TIMEOUT_MS } from "../../../shared/webhooks";
import type { Sql } from "../../sql";
import { isInternalEvent } from "../core/events";
import { enabledHooks, hasEnabledHook } from "./hooks";
import { writeLog } from "../core/logs";
import type { HookEventPayload } from "../core/outbox";
import type { DeliverableEvent, Destination } from "../core/relay";


/**
 * The JSON body POSTed to a webhook (documented in docs/outbox-and-logs.md, "Webhook delivery"):
 * `{ id, event_type, trigger_id, tenant_id, created_at, attempt, data }`, where `id` equals the
 * `Idempotency-Key` header and `data` is the trigger's payload (`user`, `client_id` ...), already redacted.
 */
export function webhookBody(event: DeliverableEvent, tenantId: string) {
  const payload = event.payload as unknown as HookEventPayload;
  return {
    id: event.id,
    event_type: event.event_type,
    trigger_id: payload.trigger_id,
    tenant_id: tenantId,
    created_at: new Date(event.created_at).toISOString(),
    attempt: event.retry_count + 1,
    data: payload.data,
  };
}


/** Without the deployment's settings: no loopback, no own host known. */
const STRICT_EGRESS = egressPolicyFrom({});

/** Logs: every event type not starting with `hook.` or `internal.`; a redelivered log id is ignored. */
export function logsDestination(sql: Sql): Destination {
  return {
    name: "logs",
    lane: "local",
    timeoutMs: 0,
    accepts: (type) => !type.startsWith("hook.") && !isInternalEvent(type),
    deliver: (event, now) => writeLog(sql, event.id, event.payload as unknown as AuditEvent, now),
  };
}

/** The tenant this one inherits webhooks from (control-plane inheritance), if any. */
export interface ParentHooks {
  /** Whether there is a parent now (a synchronous read of this tenant's settings: asked inside a write). */
  linked(): boolean;
  /** The parent's enabled webhooks of a trigger (none when it inherits nothing), read at delivery time. */
  enabled(trigger: string): Promise<HookRecord[]>;
}

/**
 * Webhooks: `hook.*` events go to every enabled hook of the trigger, all at once, each with the
 * `Idempotency-Key: {event.id}` header; one failure fails the destination (the whole event is retried,
 * receivers deduplicate by the key).
 */
export function webhookDestination(sql: Sql, tenantId: string, parentHooks?: ParentHooks, egress: EgressPolicy = STRICT_EGRESS): Destination {
  return {
    name: "webhook",
    lane: "network",
    timeoutMs: WEBHOOK_TIMEOUT_MS,
    accepts: (type) => type.startsWith("hook."),
    // Issue 31: a trigger without an enabled webhook here, in a tenant that inherits none, has no event to store.
    wants: (type) => hasEnabledHook(sql, type.slice("hook.".length)) || (parentHooks?.linked() ?? false),
    async deliver(event) {
      const trigger = event.event_type.slice("hook.".length);
      // Control-plane inheritance (issue 15 point 2): the parent's webhooks, read at delivery time, get the
      // child's events too (body `tenant_id` is the child's).
      const hooks = [...enabledHooks(sql, trigger), ...(parentHooks ? await parentHooks.enabled(trigger) : [])];
      if (!hooks.length) return;
      const body = JSON.stringify(webhookBody(event, tenantId));
      const results = await Promise.allSettled(hooks.map((hook) => postToHook(hook, body, event.id, egress)));
      const failures = results.flatMap((result, i) => {
        const hook = hooks[i] as HookRecord;
        if (result.status === "rejected") return [`hook ${hook.id}: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`];
        void result.value.body?.cancel();
        return result.value.ok ? [] : [`hook ${hook.id}: HTTP ${result.value.status}`];
      });
      if (failures.length) throw new Error(failures.join("; "));
    },
  };
}

/**
 * Registration finalizer: listed after the delivery destinations, so `registration_completed_at` is set
 * only once every earlier destination succeeded for `hook.post-user-registration`.
 */
export function registrationFinalizer(sql: Sql): Destination {
  return {
    name: "registration_finalizer",
    lane: "network",
    timeoutMs: 0,
    accepts: (type) => type === "hook.post-user-registration",
    deliver(event, now) {
      const user = (event.payload as { data?: { user?: { user_id?: Json } } }).data?.user;
      if (typeof user?.user_id !== "string") return;
      sql.run`UPDATE users SET registration_completed_at = ${now} WHERE user_id = ${user.user_id} AND registration_completed_at IS NULL`;
    },
  };
}

/**
 * The delivery destinations in SPEC §6.2 order (code hooks, i.e. actions, after the webhooks and before the
 * registration finalizer). The internal destinations of other capabilities (the revocation cascades of
 * login/cascade-destinations.ts, control-plane sync, email) follow them; the composition root
 * (composition.ts) puts the list together.
 */
export function defaultDestinations(sql: Sql, tenantId: string, codeHooks?: Destination, parentHooks?: ParentHooks, egress?: EgressPolicy): Destination[] {
  return [logsDestination(sql), webhookDestination(sql, tenantId, parentHooks, egress), ...(codeHooks ? [codeHooks] : []), registrationFinalizer(sql)];
}

export { postToHook, WEBHOOK_TIMEOUT_MS };
