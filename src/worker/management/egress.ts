import { egressPolicyFrom, egressRefusal } from "../../shared/egress-policy";
import { problem } from "../../shared/errors";
import type { AppContext } from "../context";

/**
 * 400 invalid_body when a URL a tenant chose (a webhook, a log stream endpoint, a back-channel logout URI)
 * points where this deployment sends no request (issue 25 point 8, src/shared/egress-policy.ts). Deliveries
 * check again, so a URL saved before or under another policy is refused then.
 */
export function refuseEgress(c: AppContext, property: string, urls: readonly (string | null | undefined)[]): void {
  const policy = egressPolicyFrom(c.env);
  for (const url of urls) {
    const reason = url ? egressRefusal(url, policy) : null;
    if (reason) throw problem("invalid_body", { detail: `Payload validation error: '${reason}' on property ${property}` });
  }
}
