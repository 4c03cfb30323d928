/**
 * Value parsing for typed fields of the `q` language (issue 9 point 2: `created_at` / `last_login`
 * ranges, `logins_count`, booleans). Every value becomes a bound parameter, never SQL text.
 */
import { LuceneError } from "./ast";

/** A half-open interval `[start, end)` of integers (epoch ms or counts). */
export interface Interval {
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})?$/;

/**
 * Parses an ISO date (`2024-01-31`: the whole UTC day), an ISO date-time (one millisecond; no zone means
 * UTC) or epoch milliseconds, because the columns store integer epoch ms.
 */
export function parseDateValue(field: string, raw: string): Interval {
  if (/^\d{1,15}$/.test(raw)) {
    const ms = Number(raw);
    return { start: ms, end: ms + 1 };
  }
  const d = DATE_ONLY.exec(raw);
  if (d) {
    const ms = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]));
    // Date.UTC rolls 2024-02-30 over to March; a round trip rejects impossible dates.
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== raw) {
      throw new LuceneError("invalid_value", `'${field}' needs a valid date, got '${raw}'`);
    }
    return { start: ms, end: ms + DAY_MS };
  }
  if (DATE_TIME.test(raw)) {
    const withZone = /(?:Z|[+-]\d{2}:\d{2})$/.test(raw) ? raw : `${raw}Z`;
    const ms = Date.parse(withZone);
    if (!Number.isNaN(ms)) return { start: ms, end: ms + 1 };
  }
  throw new LuceneError(
    "invalid_value",
    `'${field}' needs an ISO date (2024-01-31), date-time (2024-01-31T12:00:00Z) or epoch milliseconds, got '${clip(raw)}'`,
  );
}

/** Parses a non-negative or negative safe integer (`logins_count`). */
export function parseIntegerValue(field: string, raw: string): Interval {
  if (/^-?\d{1,15}$/.test(raw)) {
    const n = Number(raw);
    return { start: n, end: n + 1 };
  }
  throw new LuceneError("invalid_value", `'${field}' needs an integer, got '${clip(raw)}'`);
}

/** Parses `true` / `false` (case-insensitive) into the 1 / 0 the boolean columns store. */
export function parseBooleanValue(field: string, raw: string): 0 | 1 {
  const v = raw.toLowerCase();
  if (v === "true") return 1;
  if (v === "false") return 0;
  throw new LuceneError("invalid_value", `'${field}' needs true or false, got '${clip(raw)}'`);
}

/**
 * Lower-cases ASCII only, matching SQLite's built-in `lower()`, which leaves non-ASCII untouched; using
 * `toLowerCase()` here would make `Émile` never match `lower(name)`.
 */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Length in code points, which is what SQLite's `substr()` counts on text. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A complete email address (SPEC §4.2: "a complete email address as a bare term is an equality match"). */
export function isCompleteEmail(s: string): boolean {
  return /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\.]+(?:\.[^\s@"(),:;<>[\]\\.]+)+$/.test(s);
}

/** Shortens user input quoted back in error messages. */
export function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
