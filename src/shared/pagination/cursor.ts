import { problem } from "../errors";
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../crypto/encoding";

/** The position a checkpoint cursor points after: the last item's sort key and id. */
export interface CursorKey {
  key: string | number;
  id: string;
}

/**
 * Opaque checkpoint cursor (SPEC §4.3 rule 3): it records the sort it was minted under, and decoding it
 * under another sort is a 400, as is any malformed cursor.
 */
export function encodeCursor(sort: string, position: CursorKey): string {
  return toBase64Url(utf8(JSON.stringify({ v: 1, s: sort, k: position.key, i: position.id })));
}

export function decodeCursor(cursor: string, sort: string): CursorKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fromUtf8(fromBase64Url(cursor)));
  } catch {
    throw problem("invalid_cursor");
  }
  const p = parsed as { v?: unknown; s?: unknown; k?: unknown; i?: unknown };
  if (
    p === null ||
    typeof p !== "object" ||
    p.v !== 1 ||
    typeof p.s !== "string" ||
    (typeof p.k !== "string" && typeof p.k !== "number") ||
    typeof p.i !== "string"
  ) {
    throw problem("invalid_cursor");
  }
  if (p.s !== sort) {
    throw problem("cursor_sort_mismatch", { issued: p.s, sort });
  }
  return { key: p.k, id: p.i };
}
