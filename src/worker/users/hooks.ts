import type { BlockingTrigger } from "../../objects/tenant/outbox/hooks";
import type { HookRecord } from "../../shared/schemas/hooks";
import { problem } from "../../shared/errors";
import type { AppContext } from "../context";
import { runBlockingHooks } from "../hooks/blocking";

/**
 * The prepare phase of a user write (SPEC §6.1): the trigger's blocking hooks, before any transaction. A
 * refusal is a 400 carrying the hook's reason, and nothing is written. `ownHooks`: the tenant's hooks of the
 * trigger when the caller read them already.
 */
export async function runUserHooks(c: AppContext, trigger: BlockingTrigger, data: Record<string, unknown>, ownHooks?: HookRecord[]): Promise<void> {
  const verdict = await runBlockingHooks(c, trigger, data, ownHooks);
  if (!verdict.ok) throw problem("hook_denied", { reason: verdict.reason });
}
