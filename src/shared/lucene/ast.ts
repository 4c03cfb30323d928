/**
 * AST and error type of the users-search `q` language (SPEC §4.2 "Search rules", issue 9 point 2).
 *
 * The parser produces these nodes; the compiler turns them into a SQLite WHERE clause. Keeping the AST
 * separate lets the route validate a query (400) before it touches storage.
 */
import { ManagementError } from "../errors";

/** A term: a bare word, a quoted phrase, or either behind `field:`. */
export interface TermNode {
  kind: "term";
  /** Field name as typed (`email`, `app_metadata.plan`), or null for a bare term. */
  field: string | null;
  /** The value with escapes and quotes removed. */
  value: string;
  /** True when the value came from `"..."` (literal: no wildcard, no operators). */
  phrase: boolean;
  /** True for an unescaped trailing `*` (prefix match); `value` excludes the star. */
  prefix: boolean;
  /**
   * Present for a leading `*` on a field value (`name:*usa`: ends with; with `prefix`, `name:*us*`:
   * contains); `value` excludes the star.
   */
  suffix?: true;
}

/** `_exists_:field` (also `field:*` and `field:[* TO *]`). */
export interface ExistsNode {
  kind: "exists";
  field: string;
}

/** `field:[a TO b]` (inclusive) or `field:{a TO b}` (exclusive); null bound = open end (`*`). */
export interface RangeNode {
  kind: "range";
  field: string;
  lower: string | null;
  upper: string | null;
  includeLower: boolean;
  includeUpper: boolean;
}

/** Boolean combinations. `and`/`or` always have at least two children. */
export interface AndNode {
  kind: "and";
  children: LuceneNode[];
}
export interface OrNode {
  kind: "or";
  children: LuceneNode[];
}
export interface NotNode {
  kind: "not";
  child: LuceneNode;
}

/** Any node of a parsed query. */
export type LuceneNode = TermNode | ExistsNode | RangeNode | AndNode | OrNode | NotNode;

/** Machine-readable reason of a {@link LuceneError}. */
export type LuceneErrorCode =
  | "too_long"
  | "invalid_character"
  | "syntax"
  | "too_deep"
  | "too_complex"
  | "unknown_field"
  | "invalid_value";

/**
 * A rejected query. Extends the management error so the route's `onError` answers 400 without extra
 * code (issue 9: "400 with a message naming the problem, never 500 and never a match-everything").
 */
export class LuceneError extends ManagementError {
  constructor(
    readonly code: LuceneErrorCode,
    message: string,
    /** 0-based character offset in `q` where the problem was found, when known. */
    readonly position?: number,
  ) {
    super(400, `Invalid q: ${message}`, "invalid_query");
    this.name = "LuceneError";
  }
}

/** Limits (issue 9: "a query over 2 KB is 400"); nesting and clause caps keep the SQL bounded. */
export const LUCENE_LIMITS = {
  /** Maximum UTF-8 byte length of `q`. */
  maxBytes: 2048,
  /** Maximum nesting of parentheses / NOT. */
  maxDepth: 10,
  /** Maximum number of leaf clauses (terms, ranges, exists). */
  maxClauses: 64,
} as const;
