import { type AttackProtection, DEFAULT_ATTACK_PROTECTION, type ThrottlingStages } from "../../../shared/schemas/attack-protection";
import type { Sql } from "../../sql";
import { getSetting, putSetting } from "../core/settings";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";

/** Settings key (configuration: the login path reads it from the snapshot). */
const KEY = "attack_protection";

/** Stages merged per stage and per field: a patch of one stage's `rate` keeps its `max_attempts` and the other stages. */
function mergeStages(base: ThrottlingStages, patch: ThrottlingStages | undefined): ThrottlingStages {
  const out: ThrottlingStages = { ...base };
  for (const [name, fields] of Object.entries(patch ?? {}) as Array<[keyof ThrottlingStages, ThrottlingStages[keyof ThrottlingStages]]>) {
    out[name] = { ...base[name], ...fields };
  }
  return out;
}

/** A section with a patch (or stored values) over it: fields replaced, `stage` merged per stage and field. */
function mergeSection<K extends keyof AttackProtection>(section: K, base: AttackProtection[K], patch: Partial<AttackProtection[K]> | undefined): AttackProtection[K] {
  const merged = { ...base, ...patch };
  if (section !== "suspicious_ip_throttling") return merged;
  const stages = mergeStages((base as AttackProtection["suspicious_ip_throttling"]).stage, (patch as Partial<AttackProtection["suspicious_ip_throttling"]> | undefined)?.stage);
  return { ...merged, stage: stages };
}

export function getAttackProtection(sql: Sql): AttackProtection {
  const stored = getSetting<Partial<AttackProtection>>(sql, KEY, {});
  return {
    brute_force_protection: mergeSection("brute_force_protection", DEFAULT_ATTACK_PROTECTION.brute_force_protection, stored.brute_force_protection),
    suspicious_ip_throttling: mergeSection("suspicious_ip_throttling", DEFAULT_ATTACK_PROTECTION.suspicious_ip_throttling, stored.suspicious_ip_throttling),
  };
}

/** Merges one section's patch (fields replaced, stages merged per stage and field) and stores the whole object. */
export function updateAttackProtection<K extends keyof AttackProtection>(
  sql: Sql,
  section: K,
  patch: Partial<AttackProtection[K]>,
): AttackProtection[K] {
  const current = getAttackProtection(sql);
  const next = { ...current, [section]: mergeSection(section, current[section], patch) };
  putSetting(sql, KEY, next);
  return next[section];
}

/** The attack-protection facade (`stub.attackProtection()`). */
export class AttackProtectionRpc extends TenantRpc {
  get(): AttackProtection {
    return this.read((sql) => getAttackProtection(sql));
  }

  update<K extends keyof AttackProtection>(section: K, patch: Partial<AttackProtection[K]>): AttackProtection[K] {
    return this.commit((tx) => {
      const before = getAttackProtection(tx.sql)[section];
      const after = updateAttackProtection(tx.sql, section, patch);
      const id = section.replaceAll("_", "-");
      audited(tx, this.audit, { ok: true, value: after }, { entity: "attack_protection", action: "updated", id, before, after: (v) => v });
      return after;
    }, { config: true });
  }
}
