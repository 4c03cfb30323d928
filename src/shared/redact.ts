import type { Json } from "./types";

/** What replaces a sensitive value. */
export const REDACTED = "[REDACTED]";

/**
 * Key names whose values never reach a log row or a webhook (SPEC §2.10): passwords, secrets, tokens,
 * authorization headers, API keys, cookies, credentials, private keys and stored ciphertexts. Compared
 * after lowercasing and dropping `-`, `_` and spaces, so `Client_Secret`, `x-api-key` and `apiKey` match.
 * `token_lifetime` or `token_endpoint_auth_method` are configuration, not credentials, and stay.
 */
export function isSensitiveKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_\s]/g, "");
  return (
    /(password|passwd|secret|apikey|authorization|cookie|credential|privatekey|privatejwk)/.test(k) ||
    /(token|tokens|hash|enc|ticket)$/.test(k)
  );
}

/**
 * A deep copy with every sensitive value replaced, at any depth, in objects and arrays. Header lists
 * written as `[{ name: "Authorization", value: "..." }]` (log-stream sinks) lose their `value` too.
 */
export function redact(value: unknown, depth = 0): Json {
  if (depth > 32) return REDACTED;
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (typeof value !== "object") return value as Json;
  const source = value as Record<string, unknown>;
  const label = typeof source.name === "string" ? source.name : typeof source.key === "string" ? source.key : null;
  const out: Record<string, Json> = {};
  for (const [key, item] of Object.entries(source)) {
    if (item === undefined) continue;
    if (isSensitiveKey(key) && isNamedList(item)) {
      // SPEC §2.10: an action's secrets keep their names (and times), never their values.
      out[key] = item.map(({ name, updated_at }) => ({ name, ...(typeof updated_at === "string" ? { updated_at } : {}), value: REDACTED }));
      continue;
    }
    out[key] = isSensitiveKey(key) || (key === "value" && label !== null && isSensitiveKey(label)) ? REDACTED : redact(item, depth + 1);
  }
  return out;
}

/** A list of `{ name, ... }` entries (action secrets): names are labels, not credentials. */
function isNamedList(value: unknown): value is { name: string; updated_at?: unknown }[] {
  return Array.isArray(value) && value.length > 0 && value.every((e) => typeof e === "object" && e !== null && typeof (e as { name?: unknown }).name === "string");
}
