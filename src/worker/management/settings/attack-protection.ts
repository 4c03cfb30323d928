import { auditContext } from "../../http/audit";
import { updateBruteForceBody, updateSuspiciousIpBody } from "../../../shared/schemas/attack-protection";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/**
 * Attack protection in the reference platform's shapes: the per-user lockout (SPEC §5.11, three failures
 * in five minutes by default) and suspicious-IP throttling through the rate-limit binding.
 */
export const attackProtectionRoutes = [
  defineRoute({
    method: "get",
    path: "/attack-protection/brute-force-protection",
    scope: "read:attack_protection",
    summary: "The failed-login lockout settings",
    status: 200,
    async handler(c) {
      return c.json((await targetTenant(c).attackProtection().get()).brute_force_protection);
    },
  }),
  defineRoute({
    method: "patch",
    path: "/attack-protection/brute-force-protection",
    scope: "update:attack_protection",
    summary: "Update the lockout: enabled, allowlist (IPv4/IPv6 addresses or CIDR ranges), max_attempts, shields, mode",
    body: updateBruteForceBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body }) {
      const updated = await targetTenant(c).attackProtection(auditContext(c)).update("brute_force_protection", body);
      return c.json(updated);
    },
  }),
  defineRoute({
    method: "get",
    path: "/attack-protection/suspicious-ip-throttling",
    scope: "read:attack_protection",
    summary: "The suspicious-IP throttling settings",
    status: 200,
    async handler(c) {
      return c.json((await targetTenant(c).attackProtection().get()).suspicious_ip_throttling);
    },
  }),
  defineRoute({
    method: "patch",
    path: "/attack-protection/suspicious-ip-throttling",
    scope: "update:attack_protection",
    summary: "Enable or disable suspicious-IP throttling; allowlist of IPs or CIDR ranges; stages merged per stage and field",
    body: updateSuspiciousIpBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body }) {
      const updated = await targetTenant(c).attackProtection(auditContext(c)).update("suspicious_ip_throttling", body);
      return c.json(updated);
    },
  }),
];
