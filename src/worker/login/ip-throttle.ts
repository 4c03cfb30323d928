import type { TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";

/** The client's IP as Cloudflare reports it (set by the edge; `wrangler dev` sets it too). */
export const clientIp = (c: AppContext): string | null => c.req.header("cf-connecting-ip") ?? null;

function ipv4ToNumber(ip: string): number | null {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return null;
  return (((parts[0] as number) << 24) | ((parts[1] as number) << 16) | ((parts[2] as number) << 8) | (parts[3] as number)) >>> 0;
}

/** Whether an IP is on an allowlist of addresses and IPv4 CIDR ranges. */
export function isAllowlisted(ip: string, allowlist: readonly string[]): boolean {
  const address = ipv4ToNumber(ip);
  return allowlist.some((entry) => {
    const [base, bits] = entry.split("/");
    if (bits === undefined || address === null) return entry.toLowerCase() === ip.toLowerCase();
    const network = ipv4ToNumber(base ?? "");
    const prefix = Number(bits);
    if (network === null || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) return false;
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    return (address & mask) === (network & mask);
  });
}

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
