import { type AttackProtection, DEFAULT_ATTACK_PROTECTION } from "../../shared/schemas/attack-protection";
import type { Sql } from "../sql";
import { getSetting, putSetting } from "./config";
import { TenantRpc } from "./rpc";

/** Settings key (configuration: the login path reads it from the snapshot). */
const KEY = "attack_protection";

export function getAttackProtection(sql: Sql): AttackProtection {
  const stored = getSetting<Partial<AttackProtection>>(sql, KEY, {});
  return {
    brute_force_protection: { ...DEFAULT_ATTACK_PROTECTION.brute_force_protection, ...stored.brute_force_protection },
    suspicious_ip_throttling: { ...DEFAULT_ATTACK_PROTECTION.suspicious_ip_throttling, ...stored.suspicious_ip_throttling },
  };
}

/** Merges one section's patch (fields replaced) and stores the whole object. */
export function updateAttackProtection<K extends keyof AttackProtection>(
  sql: Sql,
  section: K,
  patch: Partial<AttackProtection[K]>,
): AttackProtection[K] {
  const current = getAttackProtection(sql);
  const next = { ...current, [section]: { ...current[section], ...patch } };
  putSetting(sql, KEY, next);
  return next[section];
}

/** The attack-protection facade (`stub.attackProtection()`). */
export class AttackProtectionRpc extends TenantRpc {
  get(): AttackProtection {
    return this.read((sql) => getAttackProtection(sql));
  }

  update<K extends keyof AttackProtection>(section: K, patch: Partial<AttackProtection[K]>): AttackProtection[K] {
    return this.commit(({ sql }) => updateAttackProtection(sql, section, patch), { config: true });
  }
}
