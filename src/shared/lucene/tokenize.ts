/**
 * Tokenizer of the `q` language (SPEC §4.2 "Search rules").
 *
 * Quoting and escaping are decided here, once, so that the parser never sees an `OR` that came from
 * inside quotes ("quoted values are literal") and an escaped quote never ends a phrase.
 */
import { LUCENE_LIMITS, LuceneError } from "./ast";

/** A lexical token; `pos` is the 0-based offset in the query, for error messages. */
export type Token =
  | { t: "lparen" | "rparen" | "and" | "or" | "not" | "minus"; pos: number }
  | { t: "term"; pos: number; field: string | null; value: string; phrase: boolean; prefix: boolean; suffix?: true }
  | {
      t: "range";
      pos: number;
      field: string;
      lower: string | null;
      upper: string | null;
      includeLower: boolean;
      includeUpper: boolean;
    };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL = /[\u0001-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const SPACE = /\s/;

/**
 * Rejects input the grammar never needs: over 2 KB (issue 9), NUL, lone surrogates (cannot be bound
 * as valid UTF-8 text) and other control characters.
 */
export function checkInput(q: string): void {
  if (q.length > LUCENE_LIMITS.maxBytes || new TextEncoder().encode(q).length > LUCENE_LIMITS.maxBytes) {
    throw new LuceneError("too_long", `query is longer than ${LUCENE_LIMITS.maxBytes} bytes`);
  }
  const nul = q.indexOf("\u0000");
  if (nul >= 0) throw new LuceneError("invalid_character", "query contains a NUL character", nul);
  const lone = LONE_SURROGATE.exec(q);
  if (lone) throw new LuceneError("invalid_character", "query contains a lone surrogate (invalid UTF-16)", lone.index);
  const ctl = CONTROL.exec(q);
  if (ctl) throw new LuceneError("invalid_character", "query contains a control character", ctl.index);
}

/** Splits `q` into tokens. Throws {@link LuceneError} on unbalanced quotes/brackets or bad escapes. */
export function tokenize(q: string): Token[] {
  checkInput(q);
  const out: Token[] = [];
  let i = 0;
  const n = q.length;
  const boundary = (c: string | undefined) => c === undefined || SPACE.test(c) || c === "(" || c === ")";

  /** Reads `"..."` starting at the opening quote; returns [value, index after closing quote]. */
  const readPhrase = (start: number): [string, number] => {
    let v = "";
    let j = start + 1;
    while (j < n) {
      const c = q[j] as string;
      if (c === "\\") {
        if (j + 1 >= n) break;
        v += q[j + 1];
        j += 2;
        continue;
      }
      if (c === '"') {
        if (!boundary(q[j + 1])) {
          throw new LuceneError("syntax", "unexpected character after closing quote (proximity ~ is not supported)", j + 1);
        }
        return [v, j + 1];
      }
      v += c;
      j++;
    }
    throw new LuceneError("syntax", "unbalanced quote: phrase is not closed", start);
  };

  /** Reads a bare word up to a boundary. `raw` keeps escapes for field detection. */
  const readWord = (start: number, stopAtColon: boolean) => {
    let v = "";
    let j = start;
    let prefix = false;
    let colon = -1;
    while (j < n && !boundary(q[j])) {
      const c = q[j] as string;
      if (c === "\\") {
        if (j + 1 >= n) throw new LuceneError("syntax", "dangling backslash at end of query", j);
        v += q[j + 1];
        j += 2;
        continue;
      }
      if (c === ":" && stopAtColon) {
        colon = j;
        break;
      }
      if (c === '"') throw new LuceneError("syntax", "unexpected quote inside a term (escape it as \\\")", j);
      if (c === "*") {
        if (!boundary(q[j + 1])) {
          throw new LuceneError("syntax", "wildcard * is only supported at the end of a term", j);
        }
        prefix = true;
        j++;
        break;
      }
      v += c;
      j++;
    }
    return { value: v, end: j, prefix, colon };
  };

  while (i < n) {
    const c = q[i] as string;
    if (SPACE.test(c)) {
      i++;
      continue;
    }
    if (c === "(") {
      out.push({ t: "lparen", pos: i++ });
      continue;
    }
    if (c === ")") {
      out.push({ t: "rparen", pos: i++ });
      continue;
    }
    if (c === "-" || c === "!") {
      const nx = q[i + 1];
      if (nx === undefined || SPACE.test(nx) || nx === ")") {
        throw new LuceneError("syntax", `dangling '${c}': it must be followed by a term`, i);
      }
      out.push({ t: "minus", pos: i++ });
      continue;
    }
    if (c === "+" && !boundary(q[i + 1])) {
      i++; // Lucene "required" marker: every clause is already required under implicit AND.
      continue;
    }
    if (c === '"') {
      const [value, end] = readPhrase(i);
      out.push({ t: "term", pos: i, field: null, value, phrase: true, prefix: false });
      i = end;
      continue;
    }
    const start = i;
    const word = readWord(i, true);
    if (word.colon < 0) {
      // Operators are recognised only when bare, unescaped and upper-case (as in Lucene).
      const raw = q.slice(start, word.end);
      if (raw === "AND" || raw === "&&") out.push({ t: "and", pos: start });
      else if (raw === "OR" || raw === "||") out.push({ t: "or", pos: start });
      else if (raw === "NOT") out.push({ t: "not", pos: start });
      else if (word.value === "" && !word.prefix) throw new LuceneError("syntax", "empty term", start);
      else out.push({ t: "term", pos: start, field: null, value: word.value, phrase: false, prefix: word.prefix });
      i = word.end;
      continue;
    }
    const field = word.value;
    if (field === "" || word.prefix) throw new LuceneError("syntax", "missing field name before ':'", start);
    i = word.colon + 1;
    // Tolerate `field: value` (Lucene skips whitespace after the colon too).
    while (i < n && SPACE.test(q[i] as string)) i++;
    const v = q[i];
    if (boundary(v)) {
      if (v === "(") throw new LuceneError("syntax", `grouping after '${field}:' is not supported`, i);
      throw new LuceneError("syntax", `missing value after '${field}:'`, i);
    }
    if (v === '"') {
      const [value, end] = readPhrase(i);
      out.push({ t: "term", pos: start, field, value, phrase: true, prefix: false });
      i = end;
    } else if (v === "[" || v === "{") {
      i = readRange(q, i, field, start, out);
    } else if (v === "*" && !boundary(q[i + 1])) {
      // `field:*usa` (ends with) or `field:*usa*` (contains): a leading wildcard on a field value only; a
      // bare term is already a substring match.
      const val = readWord(i + 1, false);
      if (val.value === "") throw new LuceneError("syntax", `missing value after '${field}:*'`, i);
      out.push({ t: "term", pos: start, field, value: val.value, phrase: false, prefix: val.prefix, suffix: true });
      i = val.end;
    } else {
      const val = readWord(i, false);
      out.push({ t: "term", pos: start, field, value: val.value, phrase: false, prefix: val.prefix });
      i = val.end;
    }
    if (out.length > LUCENE_LIMITS.maxBytes) throw new LuceneError("too_complex", "too many tokens");
  }
  return out;
}

/** Reads `[a TO b]` / `{a TO b}` (mixed brackets allowed, as in Lucene); returns the index after it. */
function readRange(q: string, open: number, field: string, start: number, out: Token[]): number {
  const includeLower = q[open] === "[";
  let j = open + 1;
  let body = "";
  while (j < q.length && q[j] !== "]" && q[j] !== "}") {
    if (q[j] === "\\" && j + 1 < q.length) {
      body += q[j + 1];
      j += 2;
      continue;
    }
    if (q[j] === "[" || q[j] === "{" || q[j] === '"') throw new LuceneError("syntax", "unexpected character in range", j);
    body += q[j];
    j++;
  }
  if (j >= q.length) throw new LuceneError("syntax", `unbalanced range bracket after '${field}:'`, open);
  const includeUpper = q[j] === "]";
  const parts = body.trim().split(/\s+/);
  if (parts.length !== 3 || parts[1] !== "TO" || !parts[0] || !parts[2]) {
    throw new LuceneError("syntax", `range for '${field}' must look like [from TO to]`, open);
  }
  const end = j + 1;
  const next = q[end];
  if (next !== undefined && !/[\s()]/.test(next)) throw new LuceneError("syntax", "unexpected character after range", end);
  out.push({
    t: "range",
    pos: start,
    field,
    lower: parts[0] === "*" ? null : parts[0],
    upper: parts[2] === "*" ? null : parts[2],
    includeLower,
    includeUpper,
  });
  return end;
}
