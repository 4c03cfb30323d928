/**
 * Compiler from the `q` AST to a SQLite WHERE clause with bound parameters (SPEC §4.2 "Search rules").
 *
 * Values only ever travel as `?` parameters; column names come only from the caller's field map.
 *
 * Substring matching (bare terms): with an FTS expression configured (`bareFts` or a field's `fts`) and a
 * term of at least 3 characters, the FTS expression is emitted so a trigram index serves the query
 * (issue 9: "fast at 100,000 users"). Otherwise, and always for 1-2 character terms (a trigram index
 * cannot match them), `instr(lower(col), ?) > 0` is emitted: a scan, but exact and free of LIKE
 * wildcard injection (`%` and `_` in the term stay literal).
 */
import { LuceneError, type LuceneNode, type RangeNode, type TermNode } from "./ast";
import { type LuceneSqlConfig, type ResolvedField, jsonPath, resolveField, validateConfig } from "./field-map";
import {
  asciiLower,
  codePointLength,
  type Interval,
  isCompleteEmail,
  parseBooleanValue,
  parseDateValue,
  parseIntegerValue,
} from "./values";

/** A bound SQL parameter. */
export type SqlParam = string | number | null;

/** A compiled filter: `where` uses only `?` placeholders, filled in order from `params`. */
export interface SqlFilter {
  where: string;
  params: SqlParam[];
}

/** Minimum term length for a trigram FTS5 index to answer a substring query. */
export const FTS_MIN_LENGTH = 3;

/** Compiles a parsed query. Throws {@link LuceneError} for unknown fields or ill-typed values. */
export function compileLucene(node: LuceneNode, config: LuceneSqlConfig): SqlFilter {
  validateConfig(config);
  const params: SqlParam[] = [];
  const where = new Compiler(config, params).node(node);
  return { where, params };
}

class Compiler {
  constructor(
    private readonly config: LuceneSqlConfig,
    private readonly params: SqlParam[],
  ) {}

  private bind(...values: SqlParam[]): void {
    this.params.push(...values);
  }

  node(n: LuceneNode): string {
    switch (n.kind) {
      case "and":
      case "or":
        return `(${n.children.map((c) => this.node(c)).join(n.kind === "and" ? " AND " : " OR ")})`;
      case "not":
        // A missing field makes a leaf NULL; Lucene's NOT must still match such rows, so NULL counts as false.
        return `(NOT coalesce(${this.node(n.child)}, 0))`;
      case "exists":
        return this.exists(resolveField(this.config, n.field));
      case "range":
        return this.range(n);
      case "term":
        return n.field === null ? this.bare(n) : this.fieldTerm(n, resolveField(this.config, n.field));
    }
  }

  /** Wraps a condition on the field's column into the `via` subquery when the field lives elsewhere. */
  private wrap(f: ResolvedField, cond: string): string {
    const via = f.spec.via;
    return via ? `${via.outer} IN (SELECT ${via.inner} FROM ${via.table} WHERE ${cond})` : `(${cond})`;
  }

  private exists(f: ResolvedField): string {
    if (f.path.length > 0) {
      this.bind(jsonPath(f.path));
      return this.wrap(f, `json_type(${f.spec.column}, ?) IS NOT NULL`);
    }
    return this.wrap(f, `${f.spec.column} IS NOT NULL`);
  }

  private interval(f: ResolvedField, raw: string): Interval {
    if (f.spec.kind === "date") return parseDateValue(f.name, raw);
    if (f.spec.kind === "integer") return parseIntegerValue(f.name, raw);
    throw new LuceneError("invalid_value", `ranges are only supported on date and number fields, not '${f.name}'`);
  }

  private range(n: RangeNode): string {
    const f = resolveField(this.config, n.field);
    const col = f.spec.column;
    const parts: string[] = [];
    // Date-only bounds cover whole days: [* TO 2024-01-31] includes all of the 31st, {2024-01-01 TO *} starts on the 2nd.
    if (n.lower !== null) {
      const iv = this.interval(f, n.lower);
      parts.push(`${col} >= ?`);
      this.bind(n.includeLower ? iv.start : iv.end);
    }
    if (n.upper !== null) {
      const iv = this.interval(f, n.upper);
      parts.push(`${col} < ?`);
      this.bind(n.includeUpper ? iv.end : iv.start);
    }
    return this.wrap(f, parts.join(" AND "));
  }

  private prefix(expr: string, value: string): string {
    this.bind(codePointLength(value), value);
    return `substr(${expr}, 1, ?) = ?`;
  }

  /**
   * `field:*abc` (ends with) and `field:*abc*` (contains) on text-like fields; like the reference platform,
   * the literal needs at least 3 characters.
   */
  private suffixTerm(n: TermNode, f: ResolvedField): string {
    const { kind, column } = f.spec;
    if (kind !== "text" && kind !== "email" && kind !== "exact") {
      throw new LuceneError("invalid_value", `wildcards are not supported on '${f.name}'`);
    }
    const v = kind === "exact" ? n.value : kind === "email" ? n.value.trim().toLowerCase() : asciiLower(n.value);
    if (codePointLength(v) < FTS_MIN_LENGTH) {
      throw new LuceneError("invalid_value", `a leading wildcard on '${f.name}' needs at least ${FTS_MIN_LENGTH} characters`);
    }
    const expr = kind === "text" ? `lower(${column})` : column;
    if (n.prefix) {
      this.bind(v);
      return this.wrap(f, `instr(${expr}, ?) > 0`);
    }
    this.bind(-codePointLength(v), v);
    return this.wrap(f, `substr(${expr}, ?) = ?`);
  }

  private fieldTerm(n: TermNode, f: ResolvedField): string {
    const { kind, column } = f.spec;
    if (n.suffix) return this.suffixTerm(n, f);
    const noPrefix = () => {
      if (n.prefix) throw new LuceneError("invalid_value", `wildcards are not supported on '${f.name}'`);
    };
    switch (kind) {
      case "email": {
        const v = n.value.trim().toLowerCase();
        if (v === "") throw new LuceneError("invalid_value", `empty value for '${f.name}'`);
        if (n.prefix) return this.wrap(f, this.prefix(column, v));
        this.bind(v);
        return this.wrap(f, `${column} = ?`);
      }
      case "text": {
        const v = asciiLower(n.value);
        if (n.prefix) return this.wrap(f, this.prefix(`lower(${column})`, v));
        this.bind(v);
        return this.wrap(f, `lower(${column}) = ?`);
      }
      case "exact":
        if (n.prefix) return this.wrap(f, this.prefix(column, n.value));
        this.bind(n.value);
        return this.wrap(f, `${column} = ?`);
      case "boolean":
        noPrefix();
        this.bind(parseBooleanValue(f.name, n.value));
        return this.wrap(f, `${column} = ?`);
      case "date":
      case "integer": {
        noPrefix();
        const iv = this.interval(f, n.value);
        if (iv.end === iv.start + 1) {
          this.bind(iv.start);
          return this.wrap(f, `${column} = ?`);
        }
        this.bind(iv.start, iv.end);
        return this.wrap(f, `${column} >= ? AND ${column} < ?`);
      }
      case "json":
        return this.jsonTerm(n, f);
    }
  }

  /**
   * Metadata equality: quoted values compare as JSON strings; bare `true`/`false` match JSON booleans and
   * bare numbers match either the JSON number or the same string, as users expect from `plan:3`.
   */
  private jsonTerm(n: TermNode, f: ResolvedField): string {
    if (f.path.length === 0) {
      throw new LuceneError("invalid_value", `'${f.name}' needs a path, e.g. ${f.name}.plan:value`);
    }
    const col = f.spec.column;
    const path = jsonPath(f.path);
    if (n.prefix) {
      this.bind(path, path);
      const cond = this.prefix(`json_extract(${col}, ?)`, n.value);
      return this.wrap(f, `json_type(${col}, ?) = 'text' AND ${cond}`);
    }
    if (!n.phrase && (n.value === "true" || n.value === "false")) {
      this.bind(path);
      return this.wrap(f, `json_type(${col}, ?) = '${n.value === "true" ? "true" : "false"}'`);
    }
    if (!n.phrase && /^-?\d{1,15}(?:\.\d{1,15})?$/.test(n.value)) {
      this.bind(path, Number(n.value), n.value);
      return this.wrap(f, `json_extract(${col}, ?) IN (?, ?)`);
    }
    this.bind(path, n.value);
    return this.wrap(f, `json_extract(${col}, ?) = ?`);
  }

  /** A bare term: email equality, prefix over the bare fields, or substring (SPEC §4.2). */
  private bare(n: TermNode): string {
    const v = n.value.trim();
    if (v === "") throw new LuceneError("syntax", "empty phrase");
    const emailField = this.config.emailField ?? "email";
    if (!n.prefix && isCompleteEmail(v)) {
      return this.fieldTerm({ ...n, value: v }, resolveField(this.config, emailField));
    }
    const fields = this.config.bareFields.map((name) => resolveField(this.config, name));
    if (n.prefix) {
      return `(${fields.map((f) => this.fieldTerm({ ...n, value: v }, f)).join(" OR ")})`;
    }
    const indexed = codePointLength(v) >= FTS_MIN_LENGTH;
    if (indexed && this.config.bareFts) {
      this.bind(ftsPhrase(v));
      return `(${this.config.bareFts})`;
    }
    const ors = fields.map((f) => {
      if (indexed && f.spec.fts) {
        this.bind(ftsPhrase(v));
        return `(${f.spec.fts})`;
      }
      this.bind(asciiLower(v));
      return this.wrap(f, `instr(lower(${f.spec.column}), ?) > 0`);
    });
    return `(${ors.join(" OR ")})`;
  }
}

/** An FTS5 phrase literal: the whole term quoted, inner quotes doubled, so no FTS operator survives. */
export function ftsPhrase(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}
