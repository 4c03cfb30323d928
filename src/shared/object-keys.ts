/**
 * Names that must never become keys of an object built from tenant code or API input (issue 25 finding 3):
 * assigning `__proto__` replaces the object's prototype (so an inherited `azp` reads as a claim, and the
 * object no longer crosses RPC: `DataCloneError`), and `constructor` / `prototype` shadow what code reading
 * the object expects to inherit. Refused wherever such a name would be a claim, a metadata key or a header.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** Whether a key is one of {@link RESERVED_KEYS}. */
export const isReservedKey = (key: string): boolean => RESERVED_KEYS.has(key);

/** The first reserved key of an object, at any depth (arrays included), or null. Own keys only. */
export function reservedKeyIn(value: unknown): string | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = reservedKeyIn(item);
      if (found) return found;
    }
    return null;
  }
  if (value === null || typeof value !== "object") return null;
  for (const key of Object.keys(value)) {
    if (isReservedKey(key)) return key;
    const found = reservedKeyIn((value as Record<string, unknown>)[key]);
    if (found) return found;
  }
  return null;
}
