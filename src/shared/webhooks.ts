import { assertEgress, type EgressPolicy } from "./egress-policy";
import type { HookRecord } from "./schemas/hooks";

/** SPEC §6.2: a webhook delivery gives up after 10 seconds. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * POSTs one body to one hook; anything but a 2xx within the timeout is a failure. The egress policy is
 * checked again here (issue 25 point 8: a hook saved before the policy, or under another one, is refused
 * with EgressRefused), and redirects are not followed (a 3xx is a failure), so a public URL cannot bounce
 * the request to an address the policy refuses.
 */
export async function postToHook(hook: Pick<HookRecord, "id" | "url">, body: string, idempotencyKey: string, egress: EgressPolicy): Promise<Response> {
  assertEgress(hook.url, egress);
  const response = await fetch(hook.url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/json", "idempotency-key": idempotencyKey, "user-agent": "Gatehouse-Webhooks/1" },
    body,
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
  });
  return response;
}
