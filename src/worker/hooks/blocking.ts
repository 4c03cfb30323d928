import { egressPolicyFrom } from "../../shared/egress-policy";
import { postToHook } from "../../shared/webhooks";
import type { BlockingTrigger } from "../../objects/tenant/outbox/hooks";
import type { HookRecord } from "../../shared/schemas/hooks";
import { redact } from "../../shared/redact";
import type { Json } from "../../shared/types";
import type { AppContext } from "../context";
import { clientIp } from "../http/audit";
import { parentOf } from "../tenant/inheritance";
import { tenantObject } from "../tenant/stubs";

/** A blocking hook's verdict: go on, or stop with the hook's reason. */
export type HookVerdict = { ok: true } | { ok: false; reason: string };

/** Whether a 2xx body denies: `{ "allow": false }`, `{ "deny": true }` or `{ "deny": { "reason": ... } }`. */
function denial(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as { allow?: unknown; deny?: unknown; reason?: unknown; code?: unknown };
  const deny = b.deny;
  if (b.allow !== false && !deny) return null;
  const nested = typeof deny === "object" && deny !== null ? (deny as { reason?: unknown }).reason : undefined;
  const reason = nested ?? b.reason;
  return typeof reason === "string" && reason ? reason.slice(0, 200) : "Denied by a hook";
}

/**
 * Runs a blocking trigger's webhooks in the prepare phase (SPEC §6.1, ARCHITECTURE.md §3), before any
 * transaction: every enabled hook of the trigger is POSTed the same body (`trigger_id`, `tenant_id`,
 * `data`, `request`) with a 10 s timeout. A non-2xx answer, a timeout or a denial body stops the write; the
 * caller then writes nothing.
 */
export async function runBlockingHooks(c: AppContext, trigger: BlockingTrigger, data: Record<string, unknown>, ownHooks?: HookRecord[]): Promise<HookVerdict> {
  // Control-plane inheritance (issue 15 point 2): the parent's hooks run after the tenant's own, read now
  // (the tenant's own may come read already, with the write's user: `userWithHooks`).
  const parent = await parentOf(c.var.settings, c.var.tenant.id);
  const [own, inherited] = await Promise.all([
    ownHooks ?? tenantObject(c.env, c.var.tenant.id).hooks().enabled(trigger),
    parent ? tenantObject(c.env, parent).hooks().enabled(trigger) : [],
  ]);
  const hooks = [...own, ...inherited];
  if (!hooks.length) return { ok: true };
  const body = JSON.stringify({
    trigger_id: trigger,
    tenant_id: c.var.tenant.id,
    data: redact(data) as Json,
    request: { ip: clientIp(c), user_agent: c.req.header("user-agent") ?? null },
  });
  const key = crypto.randomUUID();
  for (const hook of hooks) {
    let response: Response;
    try {
      response = await postToHook(hook, body, key, egressPolicyFrom(c.env));
    } catch (error) {
      return { ok: false, reason: `The ${trigger} hook did not answer (${error instanceof Error ? error.name : "error"})` };
    }
    if (!response.ok) {
      void response.body?.cancel();
      return { ok: false, reason: `The ${trigger} hook refused (HTTP ${response.status})` };
    }
    const reason = denial(await response.json().catch(() => null));
    if (reason) return { ok: false, reason };
  }
  return { ok: true };
}
