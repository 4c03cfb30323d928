import type { HookRecord } from "./schemas/hooks";

/** SPEC §6.2: a webhook delivery gives up after 10 seconds. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** POSTs one body to one hook; anything but a 2xx within the timeout is a failure. */
export async function postToHook(hook: Pick<HookRecord, "id" | "url">, body: string, idempotencyKey: string): Promise<Response> {
  const response = await fetch(hook.url, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": idempotencyKey, "user-agent": "Gatehouse-Webhooks/1" },
    body,
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
  });
  return response;
}
