/** Merging and redacting settings documents (shared by the object that stores them and the worker that shows them). */

type Doc = Record<string, unknown>;
export const isPlain = (v: unknown): v is Doc => typeof v === "object" && v !== null && !Array.isArray(v);

/** Objects merged field by field (a patch of one stage keeps the others); arrays and scalars replaced. */
export function deepMerge(base: Doc, patch: Doc): Doc {
  const out: Doc = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    out[k] = isPlain(v) && isPlain(base[k]) ? deepMerge(base[k] as Doc, v) : v;
  }
  return out;
}

/** A copy without the given dotted paths (`recaptcha_v2.secret`). */
export function withoutPaths(doc: Doc, paths: readonly string[]): Doc {
  const out = structuredClone(doc);
  for (const path of paths) {
    const parts = path.split(".");
    let node: unknown = out;
    for (const part of parts.slice(0, -1)) node = isPlain(node) ? node[part] : undefined;
    if (isPlain(node)) delete node[parts[parts.length - 1] as string];
  }
  return out;
}

