import { isAllowlisted } from "../../shared/ip";
import type { TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";

/** The client's IP as Cloudflare reports it (set by the edge; `wrangler dev` sets it too). */
export const clientIp = (c: AppContext): string | null => c.req.header("cf-connecting-ip") ?? null;

/**
 * Suspicious-IP throttling (SPEC §5.11): only when the tenant enables it, keyed `{tenant}:{ip}` in the
 * Workers rate-limit binding; an allowlisted IP skips it, and a limiter failure lets the login proceed.
 * True when the attempt is over the limit.
 */
export async function isIpThrottled(c: AppContext, config: TenantConfig): Promise<boolean> {
  const settings = config.attackProtection.suspicious_ip_throttling;
  const ip = clientIp(c);
  if (!settings.enabled || !ip || isAllowlisted(ip, settings.allowlist)) return false;
  try {
    const { success } = await c.env.LOGIN_IP_LIMITER.limit({ key: `${c.var.tenant.id}:${ip}` });
    return !success;
  } catch (error) {
    console.warn("suspicious-IP limiter failed; the login proceeds", error);
    return false;
  }
}
