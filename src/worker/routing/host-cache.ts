/**
 * Per-isolate cache of host -> tenant resolution (SPEC §8: about 30 s, with a separate, shorter TTL for
 * negative answers so a newly added domain or tenant shows up quickly).
 */
export class HostCache<T> {
  private readonly entries = new Map<string, { value: T | null; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly negativeTtlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** Returns the cached value (null = cached miss) or undefined when absent or expired. */
  get(key: string, now: number): T | null | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T | null, now: number): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: now + (value === null ? this.negativeTtlMs : this.ttlMs) });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
