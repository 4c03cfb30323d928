import { equalDigests } from "../../../shared/crypto/compare";
import { utf8 } from "../../../shared/crypto/encoding";
import type { ActionCacheEntry, ActionCacheWrite } from "../../../shared/actions/cache";
import type { Sql } from "../../sql";

/**
 * State the post-login actions keep between requests (issue 32 point 3): logins suspended by
 * `api.redirect.sendUserTo` until `/continue`, and the `api.cache` entries of each trigger.
 */

/** A login suspended by a redirect, as the worker stores it (hashes only: the state and the cookie stay out). */
export interface SuspendedLoginRow {
  state_hash: string;
  binding_hash: string;
  /** The suspended dispatch (JSON), read back by the worker at /continue. */
  resume: string;
  expires_at: number;
}

export type ResumeOutcome = { ok: true; resume: string } | { ok: false; reason: "unknown" | "other_browser" };

/** Stores a suspended login; expired ones go at the same time (the table holds live transactions only). */
export function suspendLogin(sql: Sql, row: SuspendedLoginRow, now: number): void {
  sql.run`DELETE FROM login_redirects WHERE expires_at <= ${now}`;
  sql.run`INSERT INTO login_redirects (state_hash, binding_hash, resume, expires_at, created_at)
    VALUES (${row.state_hash}, ${row.binding_hash}, ${row.resume}, ${row.expires_at}, ${now})`;
}

/**
 * Consumes a suspended login exactly once: the state must be live and the browser the one that was sent
 * away (its continue cookie). A state presented by another browser is refused and stays usable by its own
 * (an attacker who learnt it cannot cancel the victim's login); the row goes only with the statement that
 * returns it, so a replayed /continue finds nothing.
 */
export function resumeLogin(sql: Sql, stateHash: string, bindingHash: string, now: number): ResumeOutcome {
  const row = sql.first<{ binding_hash: string }>`SELECT binding_hash FROM login_redirects WHERE state_hash = ${stateHash} AND expires_at > ${now}`;
  if (!row) return { ok: false, reason: "unknown" };
  // Both are SHA-256 digests (hex) of secrets; compared synchronously so nothing interleaves with the delete.
  if (!equalDigests(utf8(row.binding_hash), utf8(bindingHash))) return { ok: false, reason: "other_browser" };
  const taken = sql.first<{ resume: string }>`DELETE FROM login_redirects WHERE state_hash = ${stateHash} AND expires_at > ${now} RETURNING resume`;
  return taken ? { ok: true, resume: taken.resume } : { ok: false, reason: "unknown" };
}

/**
 * Whether the object has the tables of this module: a shared tenant pinned at an earlier schema (issue 16
 * point 6, expand/contract) does not until its upgrade, and its logins must go on meanwhile.
 */
function hasTable(sql: Sql, name: string): boolean {
  return sql.first<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ${name}` !== undefined;
}

/** The live cache entries of a trigger (what `api.cache.get` reads during a run); none before the upgrade. */
export function cacheEntries(sql: Sql, triggerId: string, now: number): ActionCacheEntry[] {
  if (!hasTable(sql, "action_cache")) return [];
  return sql.all<ActionCacheEntry>`SELECT cache_key AS key, value, expires_at FROM action_cache
    WHERE trigger_id = ${triggerId} AND expires_at > ${now} ORDER BY cache_key`;
}

/** Applies a run's cache writes in order (the host already checked them against the limits). */
export function applyCacheWrites(sql: Sql, triggerId: string, writes: readonly ActionCacheWrite[], now: number): void {
  if (!hasTable(sql, "action_cache")) return;
  sql.run`DELETE FROM action_cache WHERE trigger_id = ${triggerId} AND expires_at <= ${now}`;
  for (const w of writes) {
    if (w.op === "delete") sql.run`DELETE FROM action_cache WHERE trigger_id = ${triggerId} AND cache_key = ${w.key}`;
    else sql.run`INSERT INTO action_cache (trigger_id, cache_key, value, expires_at) VALUES (${triggerId}, ${w.key}, ${w.value}, ${w.expires_at})
      ON CONFLICT (trigger_id, cache_key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`;
  }
}
