/**
 * Profile paths, as the reference platform writes them in export fields and SAML attribute mappings:
 * dotted keys with optional array indexes (`user_metadata.plan`, `identities[0].connection`).
 */

/** The value at a profile path (`user_metadata.plan`, `identities[0].connection`), or undefined. */
export function valueAt(user: Record<string, unknown>, path: string): unknown {
  let value: unknown = user;
  for (const segment of path.split(".")) {
    const match = /^([^[\]]+)(?:\[(\d+)\])?$/.exec(segment);
    if (!match || value === null || typeof value !== "object") return undefined;
    // Own keys only: a path names data, never a prototype member (`constructor`, `__proto__`).
    const key = match[1] as string;
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
    if (match[2] !== undefined) value = Array.isArray(value) ? value[Number(match[2])] : undefined;
  }
  return value;
}
