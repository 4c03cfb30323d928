import { z } from "zod";
import { isIpOrRange } from "../ip";

/**
 * Attack-protection settings in the reference platform's shapes (GET/PATCH
 * /api/v2/attack-protection/brute-force-protection and .../suspicious-ip-throttling).
 */

/** An IPv4 or IPv6 address, or an IPv4 or IPv6 CIDR range (the reference platform's four allowlist forms). */
export const ipOrRange = z
  .string()
  .max(64)
  .refine(isIpOrRange, "allowlist entries are IPv4 or IPv6 addresses or CIDR ranges (prefix up to 32 or 128 bits)");

export const bruteForceProtection = z.strictObject({
  enabled: z.boolean(),
  shields: z.array(z.enum(["block", "user_notification"])).max(2),
  allowlist: z.array(ipOrRange).max(100),
  mode: z.enum(["count_per_identifier_and_ip", "count_per_identifier"]),
  max_attempts: z.int().min(1).max(100),
});

const stage = z.strictObject({ max_attempts: z.int().min(1).max(100_000), rate: z.int().min(1).max(86_400_000) }).partial();

export const suspiciousIpThrottling = z.strictObject({
  enabled: z.boolean(),
  shields: z.array(z.enum(["block", "admin_notification"])).max(2),
  allowlist: z.array(ipOrRange).max(100),
  stage: z.strictObject({ "pre-login": stage, "pre-user-registration": stage, "pre-custom-token-exchange": stage }).partial(),
});

export type BruteForceProtection = z.infer<typeof bruteForceProtection>;
export type SuspiciousIpThrottling = z.infer<typeof suspiciousIpThrottling>;
export type ThrottlingStages = SuspiciousIpThrottling["stage"];

export interface AttackProtection {
  brute_force_protection: BruteForceProtection;
  suspicious_ip_throttling: SuspiciousIpThrottling;
}

/**
 * Defaults: the lockout of SPEC §5.11 (three failures per user) is on; suspicious-IP throttling is off
 * until a tenant enables it (SPEC §5.11). Its thresholds live in the rate-limit binding (SPEC §8), so the
 * stage values are reported as configured there. The custom-token-exchange stage has the reference
 * platform's documented default (threshold 10, one more attempt every 10 minutes).
 */
export const DEFAULT_ATTACK_PROTECTION: AttackProtection = {
  brute_force_protection: { enabled: true, shields: ["block"], allowlist: [], mode: "count_per_identifier", max_attempts: 3 },
  suspicious_ip_throttling: {
    enabled: false,
    shields: ["block"],
    allowlist: [],
    stage: {
      "pre-login": { max_attempts: 20, rate: 3000 },
      "pre-user-registration": { max_attempts: 20, rate: 3000 },
      "pre-custom-token-exchange": { max_attempts: 10, rate: 600_000 },
    },
  },
};

export const updateBruteForceBody = bruteForceProtection.partial();
export const updateSuspiciousIpBody = suspiciousIpThrottling.partial();
