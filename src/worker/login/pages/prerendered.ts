import { randomId } from "../../../shared/crypto/random";

/**
 * Pages rendered once and kept as bytes with holes (issue 29 point 1). A page whose output depends on the
 * request only through a few opaque tokens (the CSP nonce, the login state, the CSRF token) is rendered
 * once per key with a placeholder in each token's place, split at the placeholders, and later answered by
 * joining the pieces around the request's values: no JSX walk, no escaping, no text lookups per request.
 *
 * The placeholders are per isolate, random and alphanumeric, so escaping (HTML text, attributes,
 * `encodeURIComponent` in links) leaves them as they are, and no tenant-controlled text can contain one. A
 * value is put in a hole only when it is made of characters that every one of those contexts also leaves
 * unchanged ({@link SAFE_VALUE}); otherwise {@link PrerenderCache.fill} declines and the caller renders the
 * page in full. The caller's key must name everything else the page depends on.
 */
let mark: { text: string; pattern: RegExp } | undefined;
// Made at first use: Workers refuse random values in the global scope.
const marks = () => {
  if (!mark) {
    const text = `gh${randomId("", 16).toLowerCase()}h`;
    mark = { text, pattern: new RegExp(`${text}([a-z]+)x`, "g") };
  }
  return mark;
};

/** Characters that HTML escaping and `encodeURIComponent` both leave unchanged. */
const SAFE_VALUE = /^[A-Za-z0-9_-]+$/;

/** The placeholder of hole `name` (lowercase letters). */
export const holeMark = (name: string) => `${marks().text}${name}x`;

/** Rendered pages by key, bounded (oldest first out). */
export class PrerenderCache {
  private readonly pages = new Map<string, string[]>();

  constructor(private readonly max = 512) {}

  /**
   * The page for `key` with `values` in its holes, rendering it with {@link holeMark}s on a miss; null when a
   * value is not {@link SAFE_VALUE} (render the page normally then).
   */
  async fill(key: string, values: Record<string, string>, render: () => Promise<string> | string): Promise<string | null> {
    for (const value of Object.values(values)) if (!SAFE_VALUE.test(value)) return null;
    let parts = this.pages.get(key);
    if (!parts) {
      // split() with a capturing group: text, hole name, text, hole name, ..., text.
      parts = (await render()).split(marks().pattern);
      if (this.pages.size >= this.max) {
        const oldest = this.pages.keys().next().value;
        if (oldest !== undefined) this.pages.delete(oldest);
      }
      this.pages.set(key, parts);
    }
    let out = parts[0] ?? "";
    for (let i = 1; i < parts.length; i += 2) {
      const value = values[parts[i] as string];
      if (value === undefined) return null;
      out += value + (parts[i + 1] ?? "");
    }
    return out;
  }
}
