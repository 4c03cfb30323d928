/**
 * `api.cache` of actions (issue 32 point 3), with the reference platform's Actions cache limits: entries
 * are scoped to the trigger of the tenant, live 15 minutes unless told otherwise and at most 24 hours, keys
 * up to 64 bytes, values (strings) up to 4 KB, keys and values of a trigger together up to 8 KB, at most 20
 * entries. The harness enforces them while the action runs (so `set` answers an error the code can see);
 * the host checks the writes again before storing them.
 */
export const CACHE_LIMITS = {
  defaultTtlMs: 15 * 60 * 1000,
  maxTtlMs: 24 * 60 * 60 * 1000,
  maxKeyBytes: 64,
  maxValueBytes: 4096,
  maxTotalBytes: 8192,
  maxEntries: 20,
} as const;

/** One live entry as `api.cache.get` returns it. */
export interface ActionCacheEntry {
  key: string;
  value: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

/** What a run asked the cache to do, in order. */
export type ActionCacheWrite = { op: "set"; key: string; value: string; expires_at: number } | { op: "delete"; key: string };

const bytes = (text: string) => new TextEncoder().encode(text).length;

/**
 * The entries after a run's writes, or null when the result breaks a limit (an isolate that skipped the
 * harness's checks): then nothing is stored.
 */
export function cacheAfter(entries: readonly ActionCacheEntry[], writes: readonly ActionCacheWrite[], now: number): ActionCacheEntry[] | null {
  const live = new Map(entries.filter((e) => e.expires_at > now).map((e) => [e.key, e]));
  for (const w of writes) {
    if (bytes(w.key) > CACHE_LIMITS.maxKeyBytes || !w.key) return null;
    if (w.op === "delete") {
      live.delete(w.key);
      continue;
    }
    if (bytes(w.value) > CACHE_LIMITS.maxValueBytes || w.expires_at > now + CACHE_LIMITS.maxTtlMs + 60_000) return null;
    live.set(w.key, { key: w.key, value: w.value, expires_at: w.expires_at });
  }
  const total = [...live.values()].reduce((sum, e) => sum + bytes(e.key) + bytes(e.value), 0);
  return live.size > CACHE_LIMITS.maxEntries || total > CACHE_LIMITS.maxTotalBytes ? null : [...live.values()];
}
